// examples/readme/testkit.ts: crash a workflow at every write and check it recovers (in a *.test.ts file)
import { crashAtEveryWrite, type Effects } from '@skein/testkit';
import { defineWorkflow } from '@skein/workflow-runtime';
import { expect, it } from 'vitest';
import { z } from 'zod';

// A factory: the kit passes a fresh effect counter to every run it makes.
const order = (effects: Effects) =>
  defineWorkflow({
    name: 'order',
    input: z.object({ qty: z.number() }),
    async run(ctx, { qty }) {
      const hold = await ctx.step(
        'reserve',
        effects.track('reserve', () => `hold-${qty}`),
      );
      await ctx.sleep('cool-off', 60_000); // virtual time: no waiting
      return ctx.step(
        'charge',
        effects.track('charge', () => `charged ${hold}`),
      );
    },
  });

it('order survives a crash at any write', async () => {
  const report = await crashAtEveryWrite(order, { qty: 1 });
  expect(report.outcomes).toHaveLength(2 * report.writes); // a crash before and after every write
});
