/** Runs on an executor end to end, over real HTTP on loopback and real SQLite files (E1, E2, E3). */
import { join } from 'node:path';
import { ExecutorStateError } from '@skein/worker-runtime-http';
import { defineWorkflow } from '@skein/workflow-runtime';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { executorArena } from './support/executors.js';
import { raw, until } from './support/worker.js';

const render = defineWorkflow({
  name: 'render',
  input: z.object({ frame: z.number().int() }),
  run: async (ctx, { frame }) => ctx.step('draw', () => `frame-${frame}`),
});

const broken = defineWorkflow({
  name: 'broken',
  input: z.object({}),
  run: async () => {
    throw new Error('the renderer crashed');
  },
});

function rows(stateDir: string): Record<string, unknown>[] {
  const db = new Database(join(stateDir, 'executor.db'), { readonly: true });
  try {
    return db.prepare('SELECT * FROM executor_runs ORDER BY execution_id').all() as Record<string, unknown>[];
  } finally {
    db.close();
  }
}

describe('runs on an executor', () => {
  const arena = executorArena();

  it('E2: a result is retained, reported under the binding that accepted the run, and the ack releases the row', async () => {
    const central = await arena.hub([render]);
    const retained: { row: Record<string, unknown>; centralStatus: string | undefined }[] = [];
    const executor = arena.executor(central.url, [render], {
      onRetained: async ({ executionId }) => {
        const [row] = rows(join(arena.dir(), 'exec-a')).filter((r) => r.execution_id === executionId);
        retained.push({ row: row!, centralStatus: (await central.runtime.loadState(executionId))?.status });
      },
    });
    const report = await executor.start();
    expect(report).toMatchObject({ quarantined: 0, unreconciled: 0, incarnation: central.hub.incarnation });
    const state = await central.dispatcher.dispatch({
      executionId: 'render-1',
      workflow: 'render',
      input: { frame: 7 },
    });
    expect(state.status).toBe('completed');
    expect(state.output).toBe('frame-7');
    const log = await central.runtime.history('render-1');
    expect(log.map((e) => e.type)).toEqual(['EXECUTION_STARTED', 'EXECUTION_COMPLETED']);
    expect(log[1]!.fence).toBe(log[0]!.fence);
    // Retained first, under the binding that accepted it, while the central log was still open.
    expect(retained).toHaveLength(1);
    expect(retained[0]!.centralStatus).toBe('pending');
    expect(retained[0]!.row).toMatchObject({
      fence: log[0]!.fence,
      outcome: 'completed',
      result: '"frame-7"',
      exit_code: 0,
      hub_incarnation: report.incarnation,
      session_id: report.sessionId,
    });
    await until(() => rows(executor.stateDir).length === 0, 15_000);
  });

  it('E3: a failed workflow is retained with exit code 1 and its message, and recorded as the central failure', async () => {
    const central = await arena.hub([broken]);
    const executor = arena.executor(central.url, [broken], {
      onRetained: ({ executionId, fence }) => {
        const [row] = rows(join(arena.dir(), 'exec-a')).filter(
          (r) => r.execution_id === executionId && r.fence === fence,
        );
        seen.push(row!);
      },
    });
    const seen: Record<string, unknown>[] = [];
    await executor.start();
    const state = await central.dispatcher.dispatch({
      executionId: 'broken-1',
      workflow: 'broken',
      input: {},
    });
    expect(state.status).toBe('failed');
    expect((state.error as Error).message).toBe('the renderer crashed');
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({
      outcome: 'failed',
      exit_code: 1,
      exit_message: 'the renderer crashed',
      attempts: 0,
      refused: null,
      hub_incarnation: central.hub.incarnation,
      session_id: executor.session?.sessionId,
    });
    expect(seen[0]!.started_at).toBeTypeOf('number');
    expect(seen[0]!.chosen_at).toBeTypeOf('number');
    await until(() => rows(executor.stateDir).length === 0, 15_000);
  });

  it('E6: an executor started on a state directory of another packageVersion is refused before it opens a session', async () => {
    const central = await arena.hub([render]);
    const first = arena.executor(central.url, [render], { packageVersion: '1.4.2' });
    await first.start();
    await first.stop();
    const sessionsBefore = central.log.lines.filter((l) => l.message === 'executor session opened').length;
    const upgraded = arena.executor(central.url, [render], { packageVersion: '1.5.0' });
    await expect(upgraded.start()).rejects.toThrow(ExecutorStateError);
    await expect(upgraded.start()).rejects.toThrow(/package_version "1.4.2"; this executor has "1.5.0"/);
    expect(central.log.lines.filter((l) => l.message === 'executor session opened')).toHaveLength(
      sessionsBefore,
    );
    expect(upgraded.session).toBeNull();
  });
});

describe('reports at the hub', () => {
  const arena = executorArena();

  it('E4: a duplicate report changes nothing at the hub; a report under another binding is refused', async () => {
    const central = await arena.hub([render]);
    let body = '';
    const executor = arena.executor(central.url, [render], {
      onRetained: ({ executionId, fence }) => {
        const [row] = rows(join(arena.dir(), 'exec-a')).filter(
          (r) => r.execution_id === executionId && r.fence === fence,
        );
        body = JSON.stringify({
          executorId: 'exec-a',
          session: executor.session,
          executionId,
          fence,
          binding: { incarnation: row!.hub_incarnation, sessionId: row!.session_id },
          transactionId: row!.transaction_id,
          outcome: row!.outcome,
          result: row!.result,
          exitCode: row!.exit_code,
          exitMessage: row!.exit_message,
          chosenAt: row!.chosen_at,
        });
      },
    });
    await executor.start();
    await central.dispatcher.dispatch({ executionId: 'render-d', workflow: 'render', input: { frame: 4 } });
    const before = await central.runtime.history('render-d');
    const again = await raw(central.url, { method: 'POST', path: '/v1/executor/results', body });
    expect(again.status).toBe(200);
    expect(JSON.parse(again.body)).toEqual({ acknowledged: true, duplicate: true });
    const forged = JSON.parse(body) as Record<string, unknown>;
    const wrongBinding = {
      ...forged,
      binding: { incarnation: central.hub.incarnation, sessionId: 'session-other' },
    };
    const refused = await raw(central.url, {
      method: 'POST',
      path: '/v1/executor/results',
      body: JSON.stringify(wrongBinding),
    });
    expect(refused.status).toBe(409);
    expect(JSON.parse(refused.body)).toMatchObject({ code: 'not_your_run', executionId: 'render-d' });
    const unknown = await raw(central.url, {
      method: 'POST',
      path: '/v1/executor/results',
      body: JSON.stringify({ ...forged, executionId: 'never-handed-out' }),
    });
    expect(JSON.parse(unknown.body)).toMatchObject({ code: 'unknown_run' });
    const invalid = await raw(central.url, {
      method: 'POST',
      path: '/v1/executor/results',
      body: JSON.stringify({ ...forged, fence: -1 }),
    });
    expect(invalid.status).toBe(400);
    const unreadable = await raw(central.url, {
      method: 'POST',
      path: '/v1/executor/results',
      body: JSON.stringify({ ...forged, executionId: 'render-d', result: '{not json' }),
    });
    expect(unreadable.status).toBe(400);
    expect(JSON.parse(unreadable.body)).toMatchObject({
      code: 'invalid_request',
      issues: [{ path: 'body.result' }],
    });
    expect(await central.runtime.history('render-d')).toEqual(before);
  });
});
