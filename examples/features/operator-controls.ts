/** docs/operating.md#resume-and-fork: resume a failed execution, fork one, wait with a timeout. Run: npx tsx examples/features/operator-controls.ts */
import { fileURLToPath } from 'node:url';
import {
  createRuntime,
  defineWorkflow,
  openMemoryStores,
  ResultTimeoutError,
  type Stores,
} from '@skein/workflow-runtime';
import { z } from 'zod';

const service = { down: true, charges: 0, reservations: 0 };

export const order = defineWorkflow({
  name: 'order',
  input: z.object({ sku: z.string() }),
  signals: { ship: z.literal(true) },
  async run(ctx, { sku }) {
    const hold = await ctx.step('reserve', () => `hold-${sku}-${++service.reservations}`);
    const paid = await ctx.step(
      'charge',
      () => {
        service.charges += 1;
        if (service.down) throw new Error('card service down');
        return `paid ${hold}`;
      },
      { retry: { maxAttempts: 2, initialMs: 10 } },
    );
    await ctx.waitForSignal('ship');
    return paid;
  },
});

export async function main(stores: Stores = openMemoryStores()): Promise<unknown> {
  const runtime = createRuntime({ stores, workflows: [order] });
  const handle = await runtime.start(order, { sku: 'a' }, { executionId: 'order-1' });
  const failed = await handle.result().catch((error: Error) => error.message);

  // The card service is back: re-drive the failed execution from its log. The reservation is
  // not made again; the charge runs again with a fresh budget.
  service.down = false;
  const resumed = await runtime.resume('order-1', { reason: 'card service fixed' });
  // It now waits for "ship": result() with a timeout gives up without touching it.
  const waited = await handle.result({ timeoutMs: 100 }).catch((error: unknown) => {
    if (error instanceof ResultTimeoutError) return `still ${error.status}`;
    throw error;
  });
  await runtime.signal('order-1', 'ship', true);
  const output = await handle.result();

  // A fork: a new execution with the same input that keeps the reservation and runs on from "charge".
  const fork = await runtime.fork('order-1', { fromStep: 'charge', executionId: 'order-1-again' });
  await runtime.signal('order-1-again', 'ship', true);
  const forked = await fork.result();
  await runtime.close();
  return { failed, reopened: resumed.reopened, waited, output, forked, reservations: service.reservations };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(await main());
