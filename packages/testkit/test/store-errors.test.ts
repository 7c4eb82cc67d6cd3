/**
 * Issue 15.4, adr/0033: a store error during a run never leaves an execution silently
 * `running`. For EACH write a run makes (appends, snapshots, timers, claims), a store that
 * fails exactly that write (real SQLite underneath): the error reaches the caller of the run or
 * `onError`, and the execution is left recoverable and visible: fresh runtimes finish it with
 * the uncrashed run's output, and its log keeps L1–L3 and L6.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStores } from '@skein/store-sqlite';
import { checkLog, faultyStore, InjectedFaultError, referenceRun, VirtualClock } from '@skein/testkit';
import {
  type AnyWorkflow,
  createRuntime,
  defineWorkflow,
  isTerminalStatus,
  loadState,
  readHistory,
  type Stores,
} from '@skein/workflow-runtime';
import { afterAll, expect, it } from 'vitest';
import { z } from 'zod';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function openSqlite(): Stores {
  const dir = mkdtempSync(join(tmpdir(), 'skein-store-errors-'));
  dirs.push(dir);
  return openSqliteStores({ path: join(dir, 'skein.db'), durability: 'normal' });
}

let failedOnce = false;
const workflow: AnyWorkflow = defineWorkflow({
  name: 'store-errors',
  version: 1,
  input: z.null(),
  async run(ctx) {
    const a = await ctx.step('a', () => 'a');
    await ctx.sleep('nap', 1_000);
    const b = await ctx.step(
      'b',
      ({ attempt }) => {
        if (attempt === 1 && !failedOnce) {
          failedOnce = true;
          throw new Error('b fails once');
        }
        return 'b';
      },
      { retry: { maxAttempts: 2, initialMs: 5 } },
    );
    const [c, d] = await Promise.all([ctx.step('c', () => 'c'), ctx.sleep('short', 10).then(() => 'd')]);
    return [a, b, c, d];
  },
});

/** True when `error`, or a cause of it, is the injected failure. */
function isInjected(error: unknown): boolean {
  for (
    let current = error, depth = 0;
    current instanceof Error && depth < 6;
    current = current.cause, depth++
  )
    if (current instanceof InjectedFaultError) return true;
  return false;
}

/** Execute or wake with fresh runtimes until terminal; every rejection and onError report is collected. */
async function drive(stores: Stores, clock: VirtualClock, seen: unknown[]): Promise<void> {
  for (let call = 0; call < 40; call++) {
    const state = await loadState(stores, 'e');
    if (state !== null && isTerminalStatus(state.status)) return;
    const runtime = createRuntime({
      stores,
      workflows: [workflow],
      clock: clock.clock,
      snapshotEvery: 3,
      onError: (error) => seen.push(error),
    });
    try {
      if (state?.status === 'suspended') {
        clock.set(Math.max(clock.now(), ...state.timers.map((timer) => timer.dueAt)));
        const woken = await runtime.wake('e');
        if (woken?.sequence === state.sequence) clock.advance(30_000); // a failed claim lapses
      } else await runtime.execute({ executionId: 'e', workflow: 'store-errors', input: null });
    } catch (error) {
      seen.push(error);
    } finally {
      await runtime.close();
    }
  }
}

it('15.4: a store that fails any one write of a run: the error is reported and the execution finishes', async () => {
  failedOnce = false;
  const reference = await referenceRun(workflow, null, { executionId: 'e', openStores: openSqlite });
  expect(reference.state.status).toBe('completed');
  const writes = reference.writes.length;
  expect(writes).toBeGreaterThan(10);
  for (let k = 0; k < writes; k++) {
    failedOnce = false;
    const inner = openSqlite();
    try {
      const faulty = faultyStore(inner, { at: k, fault: 'throw' });
      const seen: unknown[] = [];
      await drive(faulty, new VirtualClock(), seen);
      const where = `write ${k} (${reference.writes[k]})`;
      expect(faulty.faulted, where).toBeDefined();
      // Reported: the caller of the run, or onError, heard of it; never swallowed.
      expect(seen.some(isInjected), `${where}: the injected error reached no one`).toBe(true);
      const state = await loadState(inner, 'e');
      expect(state?.status, where).toBe('completed');
      expect(state?.output, where).toEqual(reference.state.output);
      expect(checkLog(await readHistory(inner.events, 'e')), where).toEqual([]);
    } finally {
      await inner.close();
    }
  }
}, 120_000);

it('15.4: a run started with runtime.start that hits a store error reports it to onError, and the execution finishes', async () => {
  failedOnce = false;
  const reference = await referenceRun(workflow, null, { executionId: 'e', openStores: openSqlite });
  // Write 0 is seq 0, whose failure start itself throws; every later one happens in the background.
  for (let k = 1; k < reference.writes.length; k++) {
    failedOnce = false;
    const inner = openSqlite();
    try {
      const faulty = faultyStore(inner, { at: k, fault: 'throw' });
      const seen: unknown[] = [];
      const clock = new VirtualClock();
      const runtime = createRuntime({
        stores: faulty,
        workflows: [workflow],
        clock: clock.clock,
        snapshotEvery: 3,
        onError: (error) => seen.push(error),
      });
      await runtime.start(workflow, null, { executionId: 'e' });
      await runtime.close();
      const where = `write ${k} (${reference.writes[k]})`;
      if (faulty.faulted !== undefined)
        expect(seen.some(isInjected), `${where}: the injected error reached no one`).toBe(true);
      await drive(faulty, clock, seen);
      expect(faulty.faulted, where).toBeDefined();
      const state = await loadState(inner, 'e');
      expect(state?.status, where).toBe('completed');
      expect(state?.output, where).toEqual(reference.state.output);
    } finally {
      await inner.close();
    }
  }
}, 120_000);
