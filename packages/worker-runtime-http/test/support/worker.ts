/**
 * Test arrangement: a real worker on 127.0.0.1 over a SQLite file in a temp dir, its
 * client, and raw requests for the security tests. Everything is closed after each test.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStores } from '@skein/store-sqlite';
import {
  createHttpWorker,
  type HttpWorker,
  RemoteWorkerRuntime,
  signRequest,
  type WorkerLimits,
} from '@skein/worker-runtime-http';
import {
  type AnyWorkflow,
  createRuntime,
  type Envelope,
  type Runtime,
  type Stores,
} from '@skein/workflow-runtime';
import { afterEach } from 'vitest';

export const SECRET = 'a-test-secret-of-at-least-32-bytes!!';

/** A logged line of the worker. */
export interface Logged {
  level: 'warn' | 'error';
  message: string;
  details: Record<string, unknown>;
}

/** A worker serving a runtime, its URL, its log and a client. */
export interface Served {
  runtime: Runtime;
  stores: Stores;
  worker: HttpWorker;
  url: URL;
  logged: Logged[];
  client(options?: { timeoutMs?: number; secret?: string }): RemoteWorkerRuntime;
}

/** Register after-each cleanup; `serve()` opens a worker over a fresh SQLite file. */
export function workers(): { serve(workflows: AnyWorkflow[], limits?: WorkerLimits): Promise<Served> } {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  return {
    async serve(workflows, limits) {
      const dir = mkdtempSync(join(tmpdir(), 'skein-http-test-'));
      const stores = openSqliteStores({ path: join(dir, 'skein.db'), durability: 'normal' });
      // No in-process maintenance: the cases check what a request writes, and a maintenance pass
      // would take up the pending executions they leave behind (adr/0042).
      const runtime = createRuntime({ stores, workflows, maintenance: false, onError: () => undefined });
      const logged: Logged[] = [];
      const logger = {
        warn: (message: string, details: Record<string, unknown>) =>
          logged.push({ level: 'warn', message, details }),
        error: (message: string, details: Record<string, unknown>) =>
          logged.push({ level: 'error', message, details }),
      };
      const worker = createHttpWorker({ runtime, secret: SECRET, logger, ...(limits ? { limits } : {}) });
      const url = await worker.listen(0, '127.0.0.1');
      cleanups.push(async () => {
        await worker.close();
        await runtime.close();
        await stores.close();
        rmSync(dir, { recursive: true, force: true });
      });
      const client = (options: { timeoutMs?: number; secret?: string } = {}) =>
        new RemoteWorkerRuntime({
          url,
          secret: options.secret ?? SECRET,
          timeoutMs: options.timeoutMs ?? 10_000,
        });
      return { runtime, stores, worker, url, logged, client };
    },
  };
}

/** An answer read in full. */
export interface RawReply {
  status: number;
  headers: IncomingMessage['headers'];
  body: string;
}

/** What a raw request sends; `sign` says how its headers are made (default: signed with SECRET, now). */
export interface RawRequest {
  method: string;
  path: string;
  body?: string | Buffer;
  contentType?: string | null;
  headers?: Record<string, string>;
  sign?: { secret?: string; at?: number; path?: string; body?: string | Buffer } | false;
}

/** The signing headers `request` gets. */
export function signingHeaders(request: RawRequest): Record<string, string> {
  if (request.sign === false) return {};
  const body = request.sign?.body ?? request.body ?? '';
  return signRequest(
    Buffer.from(request.sign?.secret ?? SECRET),
    { method: request.method, path: request.sign?.path ?? request.path, body: Buffer.from(body) },
    request.sign?.at ?? Date.now(),
  );
}

/** Send a request with `node:http` exactly as given (paths are not normalised). */
export function raw(url: URL, request: RawRequest, headers = signingHeaders(request)): Promise<RawReply> {
  const body = request.body === undefined ? undefined : Buffer.from(request.body);
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      {
        host: url.hostname,
        port: url.port,
        method: request.method,
        path: request.path,
        agent: false,
        headers: {
          ...headers,
          ...(request.contentType === null
            ? {}
            : { 'content-type': request.contentType ?? 'application/json' }),
          ...(body === undefined ? {} : { 'content-length': String(body.length) }),
          ...request.headers,
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
      },
    );
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

/** The event types of a log, in seq order. */
export function types(log: readonly Envelope[]): string[] {
  return log.map((event) => event.type);
}

/** How many events of `type` the log holds. */
export function count(log: readonly Envelope[], type: string): number {
  return log.filter((event) => event.type === type).length;
}

/** Resolve once `check` holds (fails after `timeoutMs`). */
export async function until(check: () => boolean | Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
