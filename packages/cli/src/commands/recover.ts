/**
 * `skein recover [--dry-run] [--workflows module] [--lease-ttl ms] [--json]`: find the
 * executions whose owner is gone (pending or running, lease expired: the predicate a
 * `Supervisor` uses) and resume them. Resuming runs workflow bodies, so it needs the code:
 * `--workflows` names an ES module exporting the definitions. `--dry-run` only lists them.
 * On a terminal, a progress bar on stderr counts the resumed executions.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { leaseExpired } from '@skein/worker-runtime-local';
import {
  type AnyWorkflow,
  createRuntime,
  DEFAULT_LEASE_TTL_MS,
  recoverAbandoned,
  type Stores,
} from '@skein/workflow-runtime';
import { walkExecutions } from '@skein/workflow-runtime/internal';
import type { ExecutionSummary } from '@skein/workflow-runtime/spi';
import { SingleBar } from 'cli-progress';
import { UsageError, WorkflowModuleError } from '../errors.js';
import { type Io, iso, json, table } from '../output.js';
import { errorText } from '../timeline.js';

/** Options of `skein recover`. */
export interface RecoverOptions {
  dryRun?: boolean;
  workflows?: string;
  /** An execution with no live lease and no event for this long is abandoned (default: 30 000). */
  leaseTtlMs?: number;
  json?: boolean;
}

/** List, or resume, the abandoned executions; exit 1 when a resume failed. */
export async function recoverCommand(stores: Stores, options: RecoverOptions, io: Io): Promise<number> {
  const ttlMs = options.leaseTtlMs ?? DEFAULT_LEASE_TTL_MS;
  if (options.dryRun !== true && options.workflows === undefined)
    throw new UsageError(
      'recover resumes workflow bodies and needs their code: pass --workflows ./dist/workflows.js ' +
        '(an ES module exporting the definitions), or --dry-run to only list what is abandoned',
    );
  const candidates = await abandoned(stores, ttlMs);
  if (options.dryRun === true) {
    if (options.json === true) io.out(json({ abandoned: candidates }));
    else if (candidates.length === 0) io.out('no abandoned executions\n');
    else {
      io.out(table(['execution', 'workflow', 'status', 'seq', 'last event'], candidates.map(row)));
      io.out(`${candidates.length} abandoned; nothing was written (dry run)\n`);
    }
    return 0;
  }
  const workflows = await loadWorkflows(options.workflows!);
  // This command is the recovery pass: the runtime's own maintenance would race it.
  const runtime = createRuntime({ stores, workflows, lease: { ttlMs }, maintenance: false });
  const bar =
    io.isTTY && options.json !== true
      ? new SingleBar({ format: 'recover [{bar}] {value}/{total} {id}' })
      : undefined;
  bar?.start(candidates.length, 0, { id: '' });
  try {
    const report = await recoverAbandoned(
      {
        stores: runtime.stores,
        execute: async (request) => {
          const state = await runtime.execute(request);
          bar?.increment({ id: request.executionId });
          return state;
        },
      },
      { isAbandoned: leaseExpired(stores, { ttlMs }), source: iterate(candidates) },
    );
    bar?.stop();
    const errors = report.errors.map(([id, error]) => ({ executionId: id, error: errorText(error) }));
    if (options.json === true) io.out(json({ ...report, errors }));
    else {
      io.out(`recovered ${report.recovered.length}, skipped ${report.skipped} of ${report.scanned}\n`);
      for (const id of report.recovered) io.out(`  recovered ${id}\n`);
      for (const e of errors) io.err(`  failed ${e.executionId}: ${e.error}\n`);
    }
    return errors.length === 0 ? 0 : 1;
  } finally {
    bar?.stop();
    await runtime.close();
  }
}

async function abandoned(stores: Stores, ttlMs: number): Promise<ExecutionSummary[]> {
  const expired = leaseExpired(stores, { ttlMs });
  const found: ExecutionSummary[] = [];
  for await (const summary of walkExecutions(stores.events, ['pending', 'running'])) {
    if (await expired(summary)) found.push(summary);
  }
  return found;
}

async function* iterate(items: readonly ExecutionSummary[]): AsyncGenerator<ExecutionSummary> {
  yield* items;
}

function row(s: ExecutionSummary): unknown[] {
  return [s.executionId, s.workflow, s.status, s.sequence, iso(s.updatedAt)];
}

/** The workflow definitions a module exports (named exports, or arrays of them, or its default). */
export async function loadWorkflows(path: string): Promise<AnyWorkflow[]> {
  let module: Record<string, unknown>;
  try {
    module = (await import(pathToFileURL(resolve(path)).href)) as Record<string, unknown>;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new WorkflowModuleError(path, `cannot be imported: ${reason}`, { cause: error });
  }
  const found = new Set<AnyWorkflow>();
  const visit = (value: unknown) => {
    if (Array.isArray(value)) value.forEach(visit);
    else if (isWorkflow(value)) found.add(value);
  };
  Object.values(module).forEach(visit);
  if (found.size === 0)
    throw new WorkflowModuleError(
      path,
      'exports no workflow definition (export what defineWorkflow returns)',
    );
  return [...found];
}

function isWorkflow(value: unknown): value is AnyWorkflow {
  if (value === null || typeof value !== 'object') return false;
  const w = value as Partial<AnyWorkflow>;
  return (
    typeof w.name === 'string' &&
    typeof w.version === 'number' &&
    typeof w.run === 'function' &&
    typeof w.input?.safeParse === 'function'
  );
}
