/**
 * L1–L7 and once-only steps hold under a crash at every write for an execution started by
 * `signalWithStart` (its signal in seq 0, adr/0064) and for one started with a deadline (the
 * deadline's timer row written before seq 0, adr/0065), the start's own writes crashed too.
 */
import { crashAtEveryWrite, Effects } from '@skein/testkit';
import {
  type AnyWorkflow,
  createRuntime,
  defineWorkflow,
  type ExecutionState,
  openMemoryStores,
  readHistory,
  type Stores,
} from '@skein/workflow-runtime';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';

function cart(effects: Effects) {
  return defineWorkflow({
    name: 'cart',
    version: 1,
    input: z.object({ owner: z.string() }),
    signals: { add: z.string(), checkout: z.literal(true) },
    async run(ctx, { owner }) {
      // The carried signal comes first; the checkout arrives in the inbox later.
      const item = await ctx.waitForSignal('add');
      const reserved = await ctx.step(
        'reserve',
        effects.track('reserve', () => `${owner}:${item}`),
      );
      await ctx.waitForSignal('checkout');
      return ctx.step(
        'bill',
        effects.track('bill', () => `billed ${reserved}`),
      );
    },
  });
}

function quote(effects: Effects) {
  return defineWorkflow({
    name: 'quote',
    version: 1,
    input: z.object({ customer: z.string() }),
    async run(ctx, { customer }) {
      const offer = await ctx.step(
        'offer',
        effects.track('offer', () => `offer for ${customer}`),
      );
      try {
        await ctx.sleep('think-it-over', 3_600_000); // the deadline, ten minutes in, comes first
        return await ctx.step(
          'book',
          effects.track('book', () => `booked ${offer}`),
        );
      } finally {
        await ctx.step(
          'withdraw',
          effects.track('withdraw', () => `withdrawn ${offer}`),
        );
      }
    },
  });
}

/** Fresh memory stores per run, kept to look at afterwards. */
function keptStores() {
  const kept: Stores[] = [];
  const openStores = () => {
    const stores = openMemoryStores();
    kept.push(stores);
    return stores;
  };
  return { kept, openStores };
}

/**
 * The timer rows left for `executionId` once a node has fired what is due by the end of the
 * rows: a crash right after the end leaves the end's clean-up undone, and the deadline's row
 * goes when it comes due (adr/0065), as any node's wake of it deletes it then.
 */
async function timerRowsAfterDue(
  stores: Stores,
  workflow: AnyWorkflow,
  executionId: string,
): Promise<number> {
  const rows = await stores.timers.forExecution(executionId);
  if (rows.length === 0) return 0;
  const at = Math.max(...rows.map((row) => row.dueAt));
  const runtime = createRuntime({ stores, workflows: [workflow], clock: () => at, maintenance: false });
  await runtime.wake(executionId);
  await runtime.close();
  return (await stores.timers.forExecution(executionId)).length;
}

describe('crashAtEveryWrite with start options', () => {
  it('signalWithStart: every crash point, seq 0 with its signal included, recovers to the uncrashed output', async () => {
    const { kept, openStores } = keptStores();
    const report = await crashAtEveryWrite(
      cart,
      { owner: 'ada' },
      {
        start: { signal: { name: 'add', payload: 'apple', signalId: 'add-1' } },
        signals: { checkout: true },
        openStores,
      },
    );
    expect(report.reference).toMatchObject({ status: 'completed', output: 'billed ada:apple' });
    expect(report.outcomes.length).toBe(2 * report.writes);
    expect(report.outcomes.every((outcome) => outcome.status === 'completed')).toBe(true);
    // Every run wrote seq 0 with the signal it carried, once.
    for (const stores of kept) {
      const [first] = await readHistory(stores.events, 'crash-test');
      expect(first?.type).toBe('EXECUTION_STARTED');
      const started = first?.type === 'EXECUTION_STARTED' ? first.payload : undefined;
      expect(started?.signals).toHaveLength(1);
    }
  });

  it('a deadline: every crash point, the row before seq 0 included, ends cancelled at the deadline with its cleanup run once', async () => {
    const { kept, openStores } = keptStores();
    const cancelledAtDeadline = (recovered: ExecutionState) =>
      recovered.status === 'cancelled' && recovered.steps.some((step) => step.name === 'withdraw');
    const report = await crashAtEveryWrite(
      quote,
      { customer: 'ada' },
      { start: { timeoutMs: 600_000 }, openStores, outcomeAccepted: cancelledAtDeadline },
    );
    expect(report.reference.status).toBe('cancelled');
    expect(report.outcomes.length).toBe(2 * report.writes);
    expect(report.outcomes.every((outcome) => outcome.status === 'cancelled')).toBe(true);
    for (const stores of kept) {
      const log = await readHistory(stores.events, 'crash-test');
      const cancel = log.find((event) => event.type === 'CANCEL_REQUESTED');
      expect(cancel?.type === 'CANCEL_REQUESTED' ? cancel.payload.reason : undefined).toMatch(
        /^DEADLINE_EXCEEDED/,
      );
      // The execution ended: no row of it is left once due, the deadline's included.
      expect(await timerRowsAfterDue(stores, quote(new Effects()), 'crash-test')).toBe(0);
    }
  });

  it('a signalWithStart with a deadline that it beats: every crash point completes, and the deadline row goes', async () => {
    const { kept, openStores } = keptStores();
    const report = await crashAtEveryWrite(
      cart,
      { owner: 'bo' },
      {
        start: { signal: { name: 'add', payload: 'pear' }, timeoutMs: 3_600_000 },
        signals: { checkout: true },
        openStores,
      },
    );
    expect(report.reference).toMatchObject({ status: 'completed', output: 'billed bo:pear' });
    expect(report.outcomes.every((outcome) => outcome.status === 'completed')).toBe(true);
    for (const stores of kept)
      expect(await timerRowsAfterDue(stores, cart(new Effects()), 'crash-test')).toBe(0);
  });

  it('refuses bad start options before anything runs', async () => {
    await expect(
      crashAtEveryWrite(cart, { owner: 'ada' }, { start: { timeoutMs: 1_000, deadline: 5 } }),
    ).rejects.toThrow(/timeoutMs or deadline/);
    await expect(crashAtEveryWrite(cart, { owner: 'ada' }, { start: { timeoutMs: 0 } })).rejects.toThrow(
      /start\.timeoutMs/,
    );
  });
});
