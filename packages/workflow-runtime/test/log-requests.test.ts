/**
 * The requests written straight to an execution's log (`requestCancel`, `deliverSignal`, what
 * the CLI sends) refuse an ill-formed execution id by the one execution id rule, before
 * reading anything.
 */
import { InvalidInputError, openMemoryStores } from '@skein/workflow-runtime';
import { deliverSignal, requestCancel } from '@skein/workflow-runtime/internal';
import { describe, expect, test } from 'vitest';

const LONE = 'order-\uD800';

describe('log requests: execution ids', () => {
  test.each([
    ['requestCancel', () => requestCancel(openMemoryStores(), LONE, 'customer asked')],
    ['deliverSignal', () => deliverSignal(openMemoryStores(), LONE, 'go', true)],
  ])('%s refuses an id with a lone surrogate as invalid input', async (_, send) => {
    const error = await send().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as InvalidInputError).code).toBe('INVALID_INPUT');
    expect((error as Error).message).toBe(
      'executionId is invalid: executionId: must be well-formed Unicode, but has a lone surrogate (U+D800) at index 6, which cannot be stored',
    );
  });

  test('requestCancel keeps its messages for an empty and a too long id', async () => {
    const stores = openMemoryStores();
    await expect(requestCancel(stores, '', 'why')).rejects.toThrow(/^executionId is invalid: executionId: /);
    await expect(requestCancel(stores, 'x'.repeat(256), 'why')).rejects.toThrow(
      /^executionId is invalid: executionId: /,
    );
  });
});
