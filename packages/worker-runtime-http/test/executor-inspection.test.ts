/**
 * E5: `inspectRetainedRun` over real HTTP on loopback against an executor's real SQLite file:
 * each outcome, each error case (never ABSENT), and that it changes nothing.
 */
import { join } from 'node:path';
import { RetainedRunInspectionError } from '@skein/worker-runtime-http';
import { defineWorkflow } from '@skein/workflow-runtime';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { inspectRow } from '../src/executor/inspection.js';
import { RetainedStore } from '../src/executor/retained-store.js';
import { executorArena } from './support/executors.js';
import { until } from './support/worker.js';

let release: () => void = () => undefined;
let held = new Promise<void>((resolve) => (release = resolve));

const render = defineWorkflow({
  name: 'render',
  input: z.object({ frame: z.number().int() }),
  run: async (ctx, { frame }) =>
    ctx.step('draw', async () => {
      await held;
      return `frame-${frame}`;
    }),
});

function table(stateDir: string): unknown[] {
  const db = new Database(join(stateDir, 'executor.db'), { readonly: true });
  try {
    return db.prepare('SELECT * FROM executor_runs ORDER BY execution_id, fence').all();
  } finally {
    db.close();
  }
}

function write(stateDir: string, sql: string): void {
  const db = new Database(join(stateDir, 'executor.db'));
  try {
    db.exec(sql);
  } finally {
    db.close();
  }
}

async function failure(promise: Promise<unknown>): Promise<RetainedRunInspectionError> {
  const error = await promise.then(
    (value) => {
      throw new Error(`expected an error, got ${JSON.stringify(value)}`);
    },
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(RetainedRunInspectionError);
  return error as RetainedRunInspectionError;
}

describe('E5: inspecting retained runs', () => {
  const arena = executorArena();

  async function arranged() {
    held = new Promise<void>((resolve) => (release = resolve));
    const central = await arena.hub([render]);
    const executor = arena.executor(central.url, [render]);
    await executor.start();
    const dispatched = central.dispatcher.dispatch({
      executionId: 'r-1',
      workflow: 'render',
      input: { frame: 1 },
    });
    dispatched.catch(() => undefined);
    await until(() => table(executor.stateDir).length === 1, 15_000);
    return { central, executor };
  }

  it('E5: FILTERED for a row of the current session, ABSENT for none, FOUND for an earlier session, without program or arguments; reads only', async () => {
    const { central, executor } = await arranged();
    expect(await central.hub.inspectRetainedRun('exec-a', 'r-1')).toEqual({ status: 'FILTERED' });
    expect(await central.hub.inspectRetainedRun('exec-a', 'nothing-here')).toEqual({ status: 'ABSENT' });
    const before = executor.session!;
    central.hub.revokeSession('exec-a');
    await until(() => executor.session !== null && executor.session.sessionId !== before.sessionId, 15_000);
    const rowsBefore = table(executor.stateDir);
    const found = await central.hub.inspectRetainedRun('exec-a', 'r-1');
    expect(found.status).toBe('FOUND');
    if (found.status !== 'FOUND') return;
    expect(Object.keys(found.run).sort()).toEqual(
      ['binding', 'dueAt', 'executionId', 'fence', 'started', 'startMarker', 'transactionId'].sort(),
    );
    expect(found.run).toMatchObject({ executionId: 'r-1', binding: before, started: true });
    expect(found.run.startMarker).toBeTypeOf('number');
    expect(found.run.transactionId).toMatch(/^tx-/);
    expect(JSON.stringify(found)).not.toContain('render');
    expect(JSON.stringify(found)).not.toContain('frame');
    expect(table(executor.stateDir)).toEqual(rowsBefore);
    release();
  });

  it('E5: a malformed id, an oversized stored field and a read failure are errors, never ABSENT', async () => {
    const { central, executor } = await arranged();
    expect((await failure(central.hub.inspectRetainedRun('exec-a', '../etc/passwd'))).reason).toBe(
      'malformed-id',
    );
    expect((await failure(central.hub.inspectRetainedRun('no such executor!', 'r-1'))).reason).toBe(
      'malformed-id',
    );
    expect((await failure(central.hub.inspectRetainedRun('exec-b', 'r-1'))).reason).toBe('not-connected');
    write(
      executor.stateDir,
      `INSERT INTO executor_runs (execution_id, fence, workflow, hub_incarnation, session_id, transaction_id, accepted_at, due_at)
       VALUES ('big-1', 1, 'render', 'hub-old', 'session-old', '${'t'.repeat(300)}', 0, 0)`,
    );
    const oversized = await failure(central.hub.inspectRetainedRun('exec-a', 'big-1'));
    expect(oversized.reason).toBe('oversized-field');
    expect(oversized.detail).toContain('transaction_id is 300 bytes');
    write(executor.stateDir, 'ALTER TABLE executor_runs RENAME TO executor_runs_away');
    try {
      expect((await failure(central.hub.inspectRetainedRun('exec-a', 'r-1'))).reason).toBe('read-failed');
    } finally {
      write(executor.stateDir, 'ALTER TABLE executor_runs_away RENAME TO executor_runs');
    }
    release();
  });

  it('E5: a caller that gives up bounds only its own wait; shutdown is an error and joins the read', async () => {
    const { central, executor } = await arranged();
    const aborted = new AbortController();
    aborted.abort();
    expect(
      (await failure(central.hub.inspectRetainedRun('exec-a', 'r-1', { signal: aborted.signal }))).reason,
    ).toBe('gave-up');
    expect((await failure(central.hub.inspectRetainedRun('exec-a', 'r-1', { timeoutMs: 1 }))).reason).toBe(
      'gave-up',
    );
    expect(await central.hub.inspectRetainedRun('exec-a', 'r-1')).toEqual({ status: 'FILTERED' });
    release();
    const during = central.hub.inspectRetainedRun('exec-a', 'r-1');
    const stopping = executor.stop();
    const outcome = await during.then(
      (answer) => answer.status,
      (error: RetainedRunInspectionError) => error.reason,
    );
    await stopping;
    expect(['FILTERED', 'shutdown', 'not-connected']).toContain(outcome);
    expect((await failure(central.hub.inspectRetainedRun('exec-a', 'r-1'))).reason).toBe('not-connected');
  });

  it('E5: the executor answers only the current session the request names, and a closed file is a shutdown error', () => {
    const dir = join(arena.dir(), 'direct');
    const store = RetainedStore.open(dir, 'exec-a', '1.0.0');
    const current = { incarnation: 'hub-1', sessionId: 'session-2' };
    const request = { kind: 'inspect' as const, requestId: 'q-1', executionId: 'r-1', session: current };
    expect(inspectRow(store, current, request)).toEqual({ status: 'ABSENT' });
    const stale = { ...request, session: { incarnation: 'hub-1', sessionId: 'session-1' } };
    expect(inspectRow(store, current, stale)).toMatchObject({
      status: 'ERROR',
      reason: 'not-current-session',
    });
    expect(inspectRow(store, current, { ...request, executionId: 'a b' })).toMatchObject({
      status: 'ERROR',
      reason: 'malformed-id',
    });
    store.close();
    expect(inspectRow(store, current, request)).toMatchObject({ status: 'ERROR', reason: 'shutdown' });
  });
});
