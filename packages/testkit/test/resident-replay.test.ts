/**
 * adr/0068: a log written by resident bodies is one a replay reproduces. Random concurrent
 * workflows (Promise.all and Promise.race over steps that fail and retry, sleeps, signal waits
 * with and without timeouts, children) are driven to their end by ONE long-lived runtime with
 * the resident-body cache on, so their resumes go on in memory. Every log keeps L1–L3 and L6;
 * then each execution's log, without the root's last event, is copied into fresh stores and a
 * fresh runtime with the cache off recovers the root: its replay walks the whole log with no
 * `NonDeterminismError` and ends with the same output.
 */
import {
  type Branch,
  checkLog,
  concurrentWorkflow,
  concurrentWorkflowArb,
  describePlan,
  Effects,
  VirtualClock,
} from '@skein/testkit';
import {
  type AnyWorkflow,
  createRuntime,
  type ExecutionState,
  isTerminalStatus,
  loadState,
  openMemoryStores,
  type Stores,
} from '@skein/workflow-runtime';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

const ROOT = 'root';

interface Tally {
  workflows: number;
  resumes: number;
  bodies: number;
}

/** `definition` with its body's starts counted in `tally`. */
function counted(definition: AnyWorkflow, tally: Tally): AnyWorkflow {
  return {
    ...definition,
    run: (ctx, input) => {
      tally.bodies += 1;
      return definition.run(ctx, input);
    },
  } as AnyWorkflow;
}

/** Wait until the runtime runs nothing (its background resumes have suspended or ended). */
async function quiet(runtime: { activeExecutions(): string[] }): Promise<void> {
  for (let i = 0; i < 2_000 && runtime.activeExecutions().length > 0; i++)
    await new Promise((resolve) => setTimeout(resolve, 1));
  await new Promise((resolve) => setTimeout(resolve, 5));
}

/** Drive every execution to its end with one runtime: send awaited signals, else fire the next timer. */
async function driveResident(plan: Branch, tally: Tally): Promise<{ stores: Stores; root: ExecutionState }> {
  const model = concurrentWorkflow(plan);
  const effects = new Effects();
  const root = counted(model.workflow(effects), tally);
  const children = model.workflows.map((make) => make(effects));
  const clock = new VirtualClock();
  const stores = openMemoryStores();
  const errors: unknown[] = [];
  const runtime = createRuntime({
    stores,
    workflows: [root, ...children],
    clock: clock.clock,
    maintenance: false,
    onError: (error) => errors.push(error),
  });
  const sent = new Set<string>();
  try {
    await runtime.execute({ executionId: ROOT, workflow: root.name, input: null });
    for (let turn = 0; turn < 300; turn++) {
      await quiet(runtime);
      const state = await loadState(stores, ROOT);
      if (state !== null && isTerminalStatus(state.status)) {
        expect(errors, describePlan(plan)).toEqual([]);
        return { stores, root: state };
      }
      const { items } = await stores.events.listExecutions({ status: ['suspended'], limit: 100 });
      let moved = false;
      for (const item of items) {
        const suspended = await loadState(stores, item.executionId);
        for (const name of suspended?.awaiting?.signals ?? []) {
          if (sent.has(name) || !Object.hasOwn(model.signals, name)) continue;
          sent.add(name);
          await runtime.signal(item.executionId, name, model.signals[name], { signalId: name });
          moved = true;
        }
      }
      if (moved) continue;
      const timers = await Promise.all(items.map((item) => loadState(stores, item.executionId)));
      const dues = timers.flatMap((state) => state?.timers.map((timer) => timer.dueAt) ?? []);
      if (dues.length === 0) throw new Error(`${describePlan(plan)}: stuck with no timer`);
      clock.set(Math.max(clock.now(), Math.min(...dues)));
      for (const item of items) await runtime.wake(item.executionId);
    }
    throw new Error(`${describePlan(plan)}: not terminal after 300 turns`);
  } finally {
    await runtime.close();
  }
}

/** Copy every log of `from` into fresh stores, leaving out the last `dropLast` events of `ROOT`. */
async function copyLogs(from: Stores, dropLast: number): Promise<Stores> {
  const to = openMemoryStores();
  const { items } = await from.events.listExecutions({ limit: 1_000 });
  for (const item of items) {
    const events = await from.events.read(item.executionId, 0);
    const kept = item.executionId === ROOT ? events.slice(0, events.length - dropLast) : events;
    let fence = 0;
    for (const event of kept) {
      while (fence < event.fence) fence = await to.events.acquireFence(item.executionId);
      const { envelopeId, type, payload, recordedAt } = event;
      await to.events.append({
        executionId: item.executionId,
        workflow: item.workflow,
        expectedSeq: event.seq,
        fence: event.fence,
        events: [{ envelopeId, type, payload, recordedAt }],
      });
    }
  }
  return to;
}

/** Recover `ROOT` from `stores` with a fresh runtime, the cache off: it replays its whole log. */
async function replayed(plan: Branch, stores: Stores, at: number): Promise<ExecutionState> {
  const model = concurrentWorkflow(plan);
  const effects = new Effects();
  const runtime = createRuntime({
    stores,
    workflows: [model.workflow(effects), ...model.workflows.map((make) => make(effects))],
    clock: () => at,
    maintenance: false,
    cache: { maxResident: 0 },
  });
  try {
    return await runtime.execute({ executionId: ROOT, workflow: 'concurrent' });
  } finally {
    await runtime.close();
  }
}

async function check(plan: Branch, tally: Tally): Promise<void> {
  const { stores, root } = await driveResident(plan, tally);
  tally.workflows += 1;
  const { items } = await stores.events.listExecutions({ limit: 1_000 });
  for (const item of items) {
    const log = await stores.events.read(item.executionId, 0);
    expect(checkLog(log), `${item.executionId}: ${describePlan(plan)}`).toEqual([]);
    if (item.executionId === ROOT)
      tally.resumes += log.filter((event) => event.type === 'EXECUTION_RESUMED').length;
  }
  const recovered = await replayed(plan, await copyLogs(stores, 1), root.updatedAt);
  expect(recovered.status, describePlan(plan)).toBe(root.status);
  expect(recovered.output, describePlan(plan)).toEqual(root.output);
}

describe('logs written by resident bodies replay to the same end', () => {
  it('adr/0068: random concurrent workflows resumed in memory by one runtime replay, from a copy of their logs, to the same outcome', async () => {
    const tally: Tally = { workflows: 0, resumes: 0, bodies: 0 };
    await fc.assert(
      fc.asyncProperty(concurrentWorkflowArb({ maxDepth: 3, maxBranches: 3 }), (plan) => check(plan, tally)),
      { numRuns: 200, seed: Number(process.env.SKEIN_PROPERTY_SEED ?? 20261201) },
    );
    console.log(
      `${tally.workflows} random concurrent workflows, ${tally.resumes} resumes, ${tally.bodies} body starts`,
    );
    expect(tally.workflows).toBeGreaterThanOrEqual(200);
    // The resumes went on in memory: far fewer body starts than resumes (each would replay).
    expect(tally.resumes).toBeGreaterThan(20);
    expect(tally.bodies).toBe(tally.workflows);
  }, 600_000);
});
