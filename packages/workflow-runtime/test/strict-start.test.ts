/**
 * A strict start (adr/0044) refuses an existing id whose recorded input differs, with
 * `ExecutionInputMismatchError`, and writes nothing; the same input returns the old execution.
 */
import {
  createClient,
  defineWorkflow,
  ErrorCodes,
  ExecutionInputMismatchError,
  InvalidInputError,
} from '@skein/workflow-runtime';
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { backings, harness, types } from './support/stores.js';

const order = defineWorkflow({
  name: 'order',
  input: z.object({ sku: z.string(), qty: z.number(), tags: z.record(z.string(), z.number()).optional() }),
  async run(ctx, input) {
    return ctx.step('total', () => input.qty * 2);
  },
});

describe.each(backings)('strict start (%s store)', (_, open) => {
  const h = harness(open);

  test('the same id with another input is refused and nothing is written; the default returns the old one', async () => {
    const { stores } = h.open();
    const runtime = h.runtime({ stores, workflows: [order] });
    const first = await runtime.start(order, { sku: 'a', qty: 1 }, { executionId: 'o-1' });
    expect(await first.result()).toBe(2);
    const before = await runtime.history('o-1');
    const refused = runtime.start(order, { sku: 'a', qty: 2 }, { executionId: 'o-1', strict: true });
    await expect(refused).rejects.toThrow(ExecutionInputMismatchError);
    await expect(refused).rejects.toMatchObject({
      code: ErrorCodes.ExecutionInputMismatch,
      executionId: 'o-1',
      message: expect.stringContaining(
        'execution "o-1" of workflow "order" already exists with a different input',
      ),
    });
    expect(await runtime.history('o-1')).toEqual(before);
    // Without strict, the documented behaviour: a handle to the existing execution.
    const lax = await runtime.start(order, { sku: 'a', qty: 2 }, { executionId: 'o-1' });
    expect(await lax.result()).toBe(2);
  });

  test('the same input (keys in another order) returns the existing execution', async () => {
    const { stores } = h.open();
    const runtime = h.runtime({ stores, workflows: [order] });
    await runtime.start(order, { sku: 'a', qty: 1, tags: { x: 1, y: 2 } }, { executionId: 'o-2' });
    const again = await runtime.start(
      order,
      { tags: { y: 2, x: 1 }, qty: 1, sku: 'a' },
      { executionId: 'o-2', strict: true },
    );
    expect(await again.result()).toBe(2);
    expect(types(await runtime.history('o-2')).filter((type) => type === 'EXECUTION_STARTED')).toHaveLength(
      1,
    );
  });

  test('a client enqueues strictly too', async () => {
    const { stores } = h.open();
    const client = createClient({ stores, workflows: [order] });
    await client.start(order, { sku: 'b', qty: 1 }, { executionId: 'o-3' });
    await expect(
      client.start(order, { sku: 'c', qty: 1 }, { executionId: 'o-3', strict: true }),
    ).rejects.toThrow(ExecutionInputMismatchError);
    await client.close();
  });

  test('L7: a strict option that is not a boolean is refused with the field named', async () => {
    const { stores } = h.open();
    const runtime = h.runtime({ stores, workflows: [order], maintenance: false });
    await expect(
      runtime.start(order, { sku: 'a', qty: 1 }, { executionId: 'o-4', strict: 'yes' as unknown as boolean }),
    ).rejects.toThrow(InvalidInputError);
    await expect(
      runtime.start(order, { sku: 'a', qty: 1 }, { executionId: 'o-4', strict: 'yes' as unknown as boolean }),
    ).rejects.toThrow(/options\.strict/);
    expect(await runtime.loadState('o-4')).toBeNull();
  });
});
