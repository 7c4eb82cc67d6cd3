/**
 * Test arrangement for executors: a hub on 127.0.0.1 over a central SQLite file in a temp
 * dir, executors with state directories in the same dir, loggers that keep what they log.
 * Everything is stopped and removed after each test.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStores } from '@skein/store-sqlite';
import {
  createExecutor,
  type Executor,
  ExecutorHub,
  type ExecutorHubOptions,
  type ExecutorLogger,
  type ExecutorOptions,
} from '@skein/worker-runtime-http';
import { LocalDispatcher } from '@skein/worker-runtime-local';
import { type AnyWorkflow, createRuntime, type Runtime, type Stores } from '@skein/workflow-runtime';
import { afterEach } from 'vitest';
import { SECRET } from './worker.js';

/** A logged line. */
export interface Line {
  level: 'info' | 'warn' | 'error';
  message: string;
  details: Record<string, unknown>;
}

/** A logger that keeps its lines. */
export function keptLogger(): ExecutorLogger & { lines: Line[] } {
  const lines: Line[] = [];
  const keep = (level: Line['level']) => (message: string, details: Record<string, unknown>) =>
    lines.push({ level, message, details });
  return { lines, info: keep('info'), warn: keep('warn'), error: keep('error') };
}

/** A hub over a central SQLite file, and a dispatcher over it. */
export interface HubServed {
  hub: ExecutorHub;
  url: URL;
  runtime: Runtime;
  stores: Stores;
  dispatcher: LocalDispatcher;
  log: ReturnType<typeof keptLogger>;
  /** Close the hub, its runtime and stores (again is a no-op). */
  close(): Promise<void>;
}

/** Register after-each cleanup; returns the arrangement's helpers. */
export function executorArena() {
  const cleanups: (() => Promise<void>)[] = [];
  const dir = { path: '' };
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    if (dir.path !== '') rmSync(dir.path, { recursive: true, force: true });
    dir.path = '';
  });
  const base = () => {
    if (dir.path === '') dir.path = mkdtempSync(join(tmpdir(), 'skein-executor-test-'));
    return dir.path;
  };
  return {
    /** The test's temp dir. */
    dir: base,
    /** A hub on `port` (default: ephemeral) over `central.db` in the temp dir. */
    async hub(
      workflows: AnyWorkflow[],
      options: { port?: number; hub?: Partial<ExecutorHubOptions>; executeTimeoutMs?: number } = {},
    ): Promise<HubServed> {
      const stores = openSqliteStores({ path: join(base(), 'central.db'), durability: 'normal' });
      const runtime = createRuntime({ stores, workflows, onError: () => undefined });
      const log = keptLogger();
      const hub = new ExecutorHub({
        runtime,
        secret: SECRET,
        logger: log,
        heartbeatMs: 100,
        sessionTtlMs: 10_000,
        ...options.hub,
      });
      const url = await hub.listen(options.port ?? 0, '127.0.0.1');
      const dispatcher = new LocalDispatcher({
        workers: hub,
        executeTimeoutMs: options.executeTimeoutMs ?? 20_000,
      });
      let closed = false;
      const close = async () => {
        if (closed) return;
        closed = true;
        await hub.close();
        await runtime.close();
        await stores.close();
      };
      cleanups.push(close);
      return { hub, url, runtime, stores, dispatcher, log, close };
    },
    /** An executor of `url` with its state in `<temp>/<id>`. */
    executor(
      url: URL,
      workflows: AnyWorkflow[],
      options: Partial<ExecutorOptions> = {},
    ): Executor & { log: ReturnType<typeof keptLogger>; stateDir: string } {
      const log = keptLogger();
      const id = options.id ?? 'exec-a';
      const stateDir = options.stateDir ?? join(base(), id);
      const executor = createExecutor({
        id,
        hub: url,
        secret: SECRET,
        stateDir,
        workflows,
        packageVersion: '1.0.0',
        pollWaitMs: 1_000,
        logger: log,
        ...options,
      });
      cleanups.push(() => executor.stop());
      return Object.assign(executor, { log, stateDir });
    },
  };
}
