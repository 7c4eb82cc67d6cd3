/**
 * Delivery and reconciliation over real HTTP on loopback and real SQLite files: a session
 * revoked during delivery, a refusal that ends delivery, 40 results reconciled over two passes
 * after the hub restarted (E2, E3, E4, and the hub's reconciliation of earlier sessions).
 */
import { join } from 'node:path';
import { defineWorkflow, type Runtime } from '@skein/workflow-runtime';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { executorArena, type Line } from './support/executors.js';
import { until } from './support/worker.js';

/** A promise the test opens when it wants the runs to go on. */
class Gate {
  opened!: () => void;
  readonly promise = new Promise<void>((resolve) => (this.opened = resolve));
}
let gate = new Gate();

const render = defineWorkflow({
  name: 'render',
  input: z.object({ frame: z.number().int() }),
  run: async (ctx, { frame }) =>
    ctx.step('draw', async () => {
      await gate.promise;
      return `frame-${frame}`;
    }),
});

function rows(stateDir: string): Record<string, unknown>[] {
  const db = new Database(join(stateDir, 'executor.db'), { readonly: true });
  try {
    return db.prepare('SELECT * FROM executor_runs ORDER BY execution_id').all() as Record<string, unknown>[];
  } finally {
    db.close();
  }
}

const reports = (lines: Line[]) => lines.filter((l) => l.message === 'result reported').map((l) => l.details);

async function terminalFenceMatchesStart(runtime: Runtime, id: string): Promise<void> {
  const log = await runtime.history(id);
  expect(log.map((e) => e.type)).toEqual(['EXECUTION_STARTED', 'EXECUTION_COMPLETED']);
  expect(log[1]!.fence).toBe(log[0]!.fence);
}

describe('delivery of retained results', () => {
  const arena = executorArena();

  it('E2: a session revoked during delivery stops it after one attempt; the next session reconciles it under the original binding', async () => {
    gate = new Gate();
    const central = await arena.hub([render]);
    let revoked: { incarnation: string; sessionId: string } | null = null;
    const executor = arena.executor(central.url, [render], {
      onRetained: () => {
        revoked = central.hub.currentSession('exec-a');
        expect(central.hub.revokeSession('exec-a')).toBe(true);
      },
    });
    const first = await executor.start();
    const dispatched = central.dispatcher.dispatch({
      executionId: 'r-1',
      workflow: 'render',
      input: { frame: 1 },
    });
    await until(() => rows(executor.stateDir).length === 1, 15_000);
    gate.opened();
    const state = await dispatched;
    expect(state.status).toBe('completed');
    expect(revoked).toEqual({ incarnation: first.incarnation, sessionId: first.sessionId });
    const seen = reports(central.log.lines);
    expect(seen).toHaveLength(2);
    expect(seen[0]).toMatchObject({ reporter: revoked, binding: revoked, outcome: 'session_revoked' });
    expect(seen[1]).toMatchObject({ binding: revoked, outcome: 'settled' });
    expect(seen[1]!.reporter).not.toEqual(revoked);
    await terminalFenceMatchesStart(central.runtime, 'r-1');
    await until(() => rows(executor.stateDir).length === 0, 15_000);
  });

  it('E3: a refusal the hub would only repeat ends delivery after one attempt and is recorded with its cause', async () => {
    gate = new Gate();
    const central = await arena.hub([render]);
    const executor = arena.executor(central.url, [render]);
    await executor.start();
    const dispatched = central.dispatcher.dispatch({
      executionId: 'r-2',
      workflow: 'render',
      input: { frame: 2 },
    });
    dispatched.catch(() => undefined);
    await until(() => rows(executor.stateDir).length === 1, 15_000);
    // Another writer ends the execution in the central log while the executor runs it.
    expect(await central.runtime.deadLetter('r-2', 'taken away for the test')).toBe(true);
    gate.opened();
    await until(() => rows(executor.stateDir)[0]?.refused !== null, 15_000);
    const [row] = rows(executor.stateDir);
    expect(row).toMatchObject({
      outcome: 'completed',
      attempts: 1,
      refused: 'not_your_run',
      last_diagnostic: 'the execution was ended or taken over by another writer',
    });
    // Later passes leave it alone: still one report, the row kept (never deleted) as it was.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(reports(central.log.lines).map((r) => r.outcome)).toEqual(['not_your_run']);
    expect(rows(executor.stateDir)).toEqual([row]);
    const log = await central.runtime.history('r-2');
    expect(log.map((e) => e.type)).toEqual(['EXECUTION_STARTED', 'EXECUTION_DEAD_LETTERED']);
  });

  it('E4: 40 results retained while the hub was down are reconciled in two passes of at most 32, each once', async () => {
    gate = new Gate();
    const first = await arena.hub([render]);
    const port = Number(first.url.port);
    // A pass budget far above what 32 deliveries take, so only the count bound splits the passes.
    const executor = arena.executor(first.url, [render], { cleanupBudgetMs: 300, passBudgetMs: 60_000 });
    await executor.start();
    const ids = Array.from({ length: 40 }, (_, i) => `frame-${String(i).padStart(2, '0')}`);
    const dispatched = ids.map((executionId, frame) =>
      first.dispatcher
        .dispatch({ executionId, workflow: 'render', input: { frame } })
        .catch(() => 'hub closed'),
    );
    await until(() => rows(executor.stateDir).length === 40, 15_000);
    await first.close();
    expect(await Promise.all(dispatched)).toEqual(ids.map(() => 'hub closed'));
    gate.opened();
    await until(() => rows(executor.stateDir).every((row) => row.outcome === 'completed'), 15_000);
    expect(
      rows(executor.stateDir).every((row) => (row.attempts as number) <= 3 && row.refused === null),
    ).toBe(true);
    // Let the first session's own deliveries (300 ms budget each) end, so none is still claimed.
    await new Promise((resolve) => setTimeout(resolve, 1_500));

    const second = await arena.hub([render], { port });
    await until(() => rows(executor.stateDir).length === 0, 15_000);
    const passes = executor.log.lines
      .filter((l) => l.message === 'reconciliation pass')
      .map((l) => l.details);
    const acknowledged = passes.map((p) => p.acknowledged as number);
    expect(acknowledged.every((n) => n <= 32)).toBe(true);
    expect(acknowledged.reduce((a, b) => a + b, 0)).toBe(40);
    expect(acknowledged.length).toBeGreaterThanOrEqual(2);
    // Each result settled once; any other report is a late attempt of the first session, which
    // the new incarnation does not know (it only stops that delivery).
    const seen = reports(second.log.lines);
    const settled = seen.filter((r) => r.outcome === 'settled');
    expect(settled).toHaveLength(40);
    expect(new Set(settled.map((r) => r.executionId)).size).toBe(40);
    expect(seen.filter((r) => r.outcome !== 'settled').every((r) => r.outcome === 'session_unknown')).toBe(
      true,
    );
    for (const id of ids) await terminalFenceMatchesStart(second.runtime, id);
  }, 60_000);
});
