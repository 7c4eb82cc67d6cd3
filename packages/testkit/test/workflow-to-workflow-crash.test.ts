/**
 * Issue 23.9 for items 5 (adr/0064): L1–L7 and once-only steps hold under a crash at every write
 * for a parent that talks to its child through the handle `ctx.child` returns (`signal`, then
 * awaiting it) and to a sibling execution with `ctx.signal`, and for one that cancels its child.
 */
import { crashAtEveryWrite, type Effects } from '@skein/testkit';
import { ChildFailedError, defineWorkflow } from '@skein/workflow-runtime';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';

function family(effects: Effects) {
  const child = defineWorkflow({
    name: 'w2w-child',
    input: z.object({ n: z.number() }),
    signals: { go: z.number() },
    async run(ctx, { n }) {
      try {
        const by = await ctx.waitForSignal('go');
        return await ctx.step(
          'child-work',
          effects.track('child-work', () => n * by),
        );
      } finally {
        await ctx.step(
          'child-cleanup',
          effects.track('child-cleanup', () => 'clean'),
        );
      }
    },
  });
  const parent = defineWorkflow({
    name: 'w2w-parent',
    input: z.object({ cancel: z.boolean() }),
    async run(ctx, { cancel }) {
      const first = ctx.child(child, { n: 2 });
      const second = ctx.child(child, { n: 3 });
      if (cancel) {
        await second.cancel('not needed');
        await first.signal('go', 5);
      } else {
        await first.signal('go', 5);
        // To the sibling by id, as any execution may be signalled.
        await ctx.signal(child, second.executionId, 'go', 7);
      }
      const a = await first;
      const b = await second
        .result()
        .catch((error: unknown) => (error instanceof ChildFailedError ? error.status : 'other'));
      return ctx.step(
        'sum',
        effects.track('sum', () => `${a}+${b}`),
      );
    },
  });
  return { child, parent };
}

describe('crashAtEveryWrite with child handles and ctx.signal', () => {
  it('a parent that signals its child through the handle and its sibling by id recovers to the same output everywhere', async () => {
    const report = await crashAtEveryWrite(
      (effects) => family(effects).parent,
      { cancel: false },
      { workflows: [(effects) => family(effects).child] },
    );
    expect(report.reference).toMatchObject({ status: 'completed', output: '10+21' });
    expect(report.outcomes.length).toBe(2 * report.writes);
    expect(report.outcomes.every((outcome) => outcome.status === 'completed')).toBe(true);
  });

  it('a parent that cancels one child through its handle recovers to the same output everywhere', async () => {
    const report = await crashAtEveryWrite(
      (effects) => family(effects).parent,
      { cancel: true },
      { workflows: [(effects) => family(effects).child] },
    );
    expect(report.reference).toMatchObject({ status: 'completed', output: '10+cancelled' });
    expect(report.outcomes.every((outcome) => outcome.status === 'completed')).toBe(true);
  });
});
