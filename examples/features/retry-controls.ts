/** docs/workflows.md#retry-controls: non-retryable errors, a predicate, a rate limit's own delay. Run: npx tsx examples/features/retry-controls.ts */
import { fileURLToPath } from 'node:url';
import {
  createRuntime,
  defineWorkflow,
  openMemoryStores,
  retryAfter,
  type Stores,
} from '@skein/workflow-runtime';
import { z } from 'zod';

class CardDeclined extends Error {
  override name = 'CardDeclined';
}

/** A pretend API: rate-limited on the first call (it says when to come back), then it answers. */
let calls = 0;
function quoteApi(sku: string): number {
  calls += 1;
  if (calls === 1) throw retryAfter(20, new Error('429 Too Many Requests'));
  return sku.length * 10;
}

export const checkout = defineWorkflow({
  name: 'checkout',
  input: z.object({ sku: z.string(), card: z.string() }),
  async run(ctx, { sku, card }) {
    // The 429's own delay (20 ms here) replaces the backoff, bounded by maxRetryAfterMs.
    const price = await ctx.step('quote', () => quoteApi(sku), {
      retry: { maxAttempts: 3, maxRetryAfterMs: 60_000 },
    });
    // A declined card is final: no retry, whatever budget is left.
    const charged = await ctx
      .step(
        'charge',
        () => {
          if (card === 'empty') throw new CardDeclined('insufficient funds');
          return `charged ${price}`;
        },
        {
          retry: {
            maxAttempts: 5,
            nonRetryable: [CardDeclined, 'FraudSuspected'],
            shouldRetry: (error) => !(error instanceof TypeError), // a bug is not retried either
          },
        },
      )
      .catch(() => 'declined');
    return charged;
  },
});

export async function main(stores: Stores = openMemoryStores()): Promise<unknown> {
  calls = 0;
  const runtime = createRuntime({ stores, workflows: [checkout] });
  const handle = await runtime.start(checkout, { sku: 'abc', card: 'empty' }, { executionId: 'checkout-1' });
  const output = await handle.result(); // 'declined'
  // The log says what was decided: the quote waited the 429's 20 ms, the charge was not retried.
  const failures = (await runtime.history('checkout-1')).flatMap((e) =>
    e.type === 'STEP_FAILED'
      ? [`${e.payload.name}: ${e.payload.noRetry ?? `retry in ${e.payload.delayMs} ms`}`]
      : [],
  );
  await runtime.close();
  return { output, failures };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(await main());
