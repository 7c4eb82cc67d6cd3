/**
 * Issue #23 items 7–9: L1–L7 and once-only steps hold under a crash at every write for a
 * workflow that uses retry controls (adr/0066), for an operator's resume of a failed execution
 * (adr/0067, crashed at its own write too), for a fork that runs on from a step, and for a
 * caller's `result({ timeoutMs })` on an execution crashed at each write.
 */
import { crashAtEveryWrite, Effects, faultyStore, referenceRun } from '@skein/testkit';
import {
  createRuntime,
  defineWorkflow,
  openMemoryStores,
  ResultTimeoutError,
  readHistory,
  retryAfter,
  type Stores,
} from '@skein/workflow-runtime';
import { writeFork } from '@skein/workflow-runtime/internal';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';

class Declined extends Error {
  override name = 'Declined';
}

/** A step rate-limited once (its own retryAfterMs), a declined card not retried, and a predicate. */
function checkout(effects: Effects) {
  return defineWorkflow({
    name: 'checkout',
    version: 1,
    input: z.object({ user: z.string() }),
    async run(ctx, { user }) {
      const quote = await ctx.step(
        'quote',
        effects.track('quote', (info) => {
          if (info.attempt === 1) throw retryAfter(45_000, new Error('429'));
          return `${user}:42`;
        }),
        { retry: { maxAttempts: 3, maxRetryAfterMs: 60_000 } },
      );
      const card = await ctx
        .step(
          'card',
          effects.track('card', () => {
            throw new Declined('insufficient funds');
          }),
          { retry: { maxAttempts: 5, nonRetryable: [Declined] } },
        )
        .catch(() => 'declined');
      const note = await ctx.step(
        'note',
        effects.track('note', (info) => {
          if (info.attempt < 3) throw new Error(`busy ${info.attempt}`);
          return 'noted';
        }),
        { retry: { maxAttempts: 4, initialMs: 1_000, shouldRetry: (_error, attempt) => attempt < 3 } },
      );
      return `${quote} ${card} ${note}`;
    },
  });
}

/** reserve, then charge, which fails both attempts of its first budget and succeeds on the third. */
function order(effects: Effects) {
  return defineWorkflow({
    name: 'order',
    version: 1,
    input: z.object({ sku: z.string() }),
    async run(ctx, { sku }) {
      const hold = await ctx.step(
        'reserve',
        effects.track('reserve', () => `hold-${sku}`),
      );
      const paid = await ctx.step(
        'charge',
        effects.track('charge', (info) => {
          if (info.attempt <= 2) throw new Error(`card service down (attempt ${info.attempt})`);
          return `paid-${hold}`;
        }),
        { retry: { maxAttempts: 2, initialMs: 500 } },
      );
      return ctx.step(
        'ship',
        effects.track('ship', () => `${paid}-shipped`),
      );
    },
  });
}

describe('crashAtEveryWrite with retry controls and operator controls', () => {
  it('retry controls: every crash point recovers to the uncrashed output, each decision taken from the log', async () => {
    const report = await crashAtEveryWrite(checkout, { user: 'ada' });
    // The predicate let attempts 1 and 2 retry; attempt 3 succeeded.
    expect(report.reference).toMatchObject({ status: 'completed', output: 'ada:42 declined noted' });
    expect(report.outcomes.length).toBe(2 * report.writes);
    expect(report.outcomes.every((outcome) => outcome.status === 'completed')).toBe(true);
  });

  it('resume: every crash point, the resume itself included, ends completed with each step run once per attempt', async () => {
    const kept: Stores[] = [];
    const report = await crashAtEveryWrite(
      order,
      { sku: 'a' },
      {
        resume: true,
        openStores: () => {
          const stores = openMemoryStores();
          kept.push(stores);
          return stores;
        },
      },
    );
    expect(report.reference).toMatchObject({ status: 'completed', output: 'paid-hold-a-shipped' });
    expect(report.outcomes.length).toBe(2 * report.writes);
    expect(report.outcomes.every((outcome) => outcome.status === 'completed')).toBe(true);
    // Every run's log holds exactly one resume, after the first failure.
    for (const stores of kept) {
      const types = (await readHistory(stores.events, 'crash-test')).map((e) => e.type);
      expect(types.filter((t) => t === 'EXECUTION_REDRIVEN')).toHaveLength(1);
      expect(types[types.indexOf('EXECUTION_REDRIVEN') - 1]).toBe('EXECUTION_FAILED');
    }
  });

  it('fork: every crash point of the fork recovers; the steps before fromStep never run in it', async () => {
    // The source ran older code whose later steps had other names: a fork replays only the calls
    // before fromStep, so those need not match (and the kit counts no source step as the fork's).
    const seeded = defineWorkflow({
      name: 'order',
      version: 1,
      input: z.object({ sku: z.string() }),
      async run(ctx, { sku }) {
        const hold = await ctx.step('reserve', () => `hold-${sku}-in-source`);
        const paid = await ctx.step('price', () => `paid-${hold}`);
        return ctx.step('send', () => `${paid}-sent`);
      },
    });
    /** Fresh stores holding a completed source and its fork from "price", not yet run. */
    const openStores = async () => {
      const stores = openMemoryStores();
      const runtime = createRuntime({ stores, workflows: [seeded], maintenance: false });
      await (await runtime.start(seeded, { sku: 'f' }, { executionId: 'source' })).result();
      await runtime.close();
      await writeFork(stores, 'source', { fromStep: 'price', executionId: 'crash-test' });
      return stores;
    };
    const forked = (effects: Effects) =>
      defineWorkflow({
        name: 'order',
        version: 1,
        input: z.object({ sku: z.string() }),
        async run(ctx, { sku }) {
          const hold = await ctx.step('reserve', () => {
            throw new Error(`reserve ran in the fork for ${sku}`);
          });
          const paid = await ctx.step(
            'charge',
            effects.track('charge', () => `repaid-${hold}`),
          );
          return ctx.step(
            'ship',
            effects.track('ship', () => `${paid}-shipped`),
          );
        },
      });
    const report = await crashAtEveryWrite(forked, { sku: 'f' }, { openStores });
    const reference = report.reference;
    expect(reference).toMatchObject({ status: 'completed' });
    expect(reference.output).toBe('repaid-hold-f-in-source-shipped');
    expect(report.outcomes.every((outcome) => outcome.status === 'completed')).toBe(true);
  });
});

describe('result({ timeoutMs }) at every crash point', () => {
  it('on the crashed execution it times out and writes nothing; after the recovery it gives the output', async () => {
    const steps = (effects: Effects) =>
      defineWorkflow({
        name: 'steps',
        version: 1,
        input: z.object({ n: z.number() }),
        async run(ctx, { n }) {
          const a = await ctx.step(
            'a',
            effects.track('a', () => n + 1),
          );
          const b = await ctx.step(
            'b',
            effects.track('b', () => a * 2),
          );
          return ctx.step(
            'c',
            effects.track('c', () => `${b}`),
          );
        },
      });
    const { writes } = await referenceRun(steps, { n: 1 });
    expect(writes.length).toBeGreaterThan(3);
    const fault = (k: number) => [
      { at: k, fault: 'crash-before' as const },
      { at: k, fault: 'crash-after' as const },
    ];
    for (const plan of writes.flatMap((_op, k) => fault(k))) {
      const stores = openMemoryStores();
      const workflow = steps(new Effects());
      const crashed = faultyStore(stores, plan);
      // snapshotEvery as the kit's reference run, so its writes are the ones numbered there.
      const options = { workflows: [workflow], maintenance: false, snapshotEvery: 3 } as const;
      const node = createRuntime({ ...options, stores: crashed, onError: () => {} });
      await node.start(workflow, { n: 1 }, { executionId: 'r' }).catch(() => undefined);
      await node.close();
      expect(crashed.crash).toBeDefined();
      // Another process waits for the result with a bound: gives up, and the log is as it was.
      const reader = createRuntime({ ...options, stores });
      const before = (await stores.events.read('r', 0)).length;
      const state = await reader.loadState('r');
      if (state === null || state.status !== 'completed') {
        const waited = await reader
          .handle('r')
          .result({ timeoutMs: 20 })
          .catch((error: unknown) => error);
        if (state === null) expect(waited).toBeInstanceOf(Error);
        else expect(waited).toBeInstanceOf(ResultTimeoutError);
        expect((await stores.events.read('r', 0)).length).toBe(before);
        // The recovery (a node that starts it again, or takes over its run) ends it.
        if (state === null) await reader.start(workflow, { n: 1 }, { executionId: 'r' });
        else await reader.execute({ executionId: 'r', workflow: 'steps' });
      }
      expect(await reader.handle('r').result({ timeoutMs: 5_000 })).toBe('4');
      await reader.close();
      await stores.close();
    }
  });
});
