/**
 * Issue #23 items 7–9: L1–L7 and once-only steps hold under a crash at every write for a
 * workflow that uses retry controls (adr/0066), for an operator's resume of a failed execution
 * (adr/0067, crashed at its own write too), and for a fork that runs on from a step.
 */
import { crashAtEveryWrite, type Effects } from '@skein/testkit';
import {
  createRuntime,
  defineWorkflow,
  openMemoryStores,
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
