/** `defineTask`: a malformed task is refused; an attempt parses input and output; retries are bounded. */
import { defineTask, InvalidInputError, NonRetryableError } from '@skein/workflow-runtime';
import { runTaskAttempt, taskRetryAt } from '@skein/workflow-runtime/internal';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';

const info = { attempt: 1, index: 7, fanOutId: 'f1', workerId: 'w1', signal: new AbortController().signal };

const score = defineTask({
  name: 'score',
  input: z.object({ text: z.string() }),
  output: z.object({ score: z.number() }),
  retry: { maxAttempts: 3, initialMs: 1_000, maxMs: 5_000, jitter: 0 },
  async run(input, attempt) {
    if (input.text === 'boom') throw new Error('flaky');
    if (input.text === 'never') throw new NonRetryableError('bad case');
    if (input.text === 'shape') return { score: 'high' } as unknown as { score: number };
    return { score: input.text.length + attempt.attempt };
  },
});

describe('defineTask', () => {
  it('refuses a malformed definition, naming every field', () => {
    const error = (() => {
      try {
        defineTask({ name: '', version: 0, input: {} as never, run: 1 as never });
      } catch (thrown) {
        return thrown as InvalidInputError;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(InvalidInputError);
    expect(error?.message).toMatch(/name.*version.*input.*run/s);
    expect(() => defineTask({ ...score, retry: { maxAttempts: 0 } })).toThrow(/maxAttempts/);
  });

  it('defaults: version 1, three attempts from 1 s', () => {
    const plain = defineTask({
      name: 'plain',
      input: z.number(),
      async run(n) {
        return n;
      },
    });
    expect(plain.version).toBe(1);
    expect(plain.retry).toMatchObject({ maxAttempts: 3, initialMs: 1_000, maxMs: 60_000 });
  });

  it('an attempt parses its input and its output; schema failures and NonRetryableError are not retryable', async () => {
    expect(await runTaskAttempt(score, { text: 'abc' }, info)).toEqual({
      status: 'succeeded',
      output: { score: 4 },
    });
    expect(await runTaskAttempt(score, { text: 'boom' }, info)).toMatchObject({
      status: 'failed',
      retryable: true,
    });
    expect(await runTaskAttempt(score, { text: 'never' }, info)).toMatchObject({
      status: 'failed',
      retryable: false,
    });
    const badOutput = await runTaskAttempt(score, { text: 'shape' }, info);
    expect(badOutput).toMatchObject({ status: 'failed', retryable: false });
    const badInput = await runTaskAttempt(score, { nope: 1 }, info);
    expect(badInput).toMatchObject({ status: 'failed', retryable: false });
    expect(String((badInput as { error: Error }).error.message)).toContain('item 7');
  });

  it('F5: retryAt grows with the attempt, is bounded by the policy, and is null for a failure not retryable', () => {
    expect(taskRetryAt(score, 1, true, 'f1/7', 10_000)).toBe(11_000);
    expect(taskRetryAt(score, 2, true, 'f1/7', 10_000)).toBe(12_000);
    expect(taskRetryAt(score, 9, true, 'f1/7', 10_000)).toBe(15_000);
    expect(taskRetryAt(score, 1, false, 'f1/7', 10_000)).toBeNull();
    const long = defineTask({ ...score, retry: { maxAttempts: 50, initialMs: 1_000, maxMs: 5_000 } });
    expect(taskRetryAt(long, 40, true, 'f1/7', 0)).toBeLessThanOrEqual(5_000);
  });
});
