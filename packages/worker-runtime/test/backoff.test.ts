import { describe, expect, it } from 'vitest';
import { backoffCeiling, backoffIssues, retryDelay } from '../src/index.js';

const backoff = { initialMs: 100, maxMs: 1_000 };

describe('retryDelay', () => {
  it('the ceiling doubles from initialMs and stops at maxMs', () => {
    expect([1, 2, 3, 4, 5, 6, 60, 10_000].map((n) => backoffCeiling(n, backoff))).toEqual([
      100, 200, 400, 800, 1_000, 1_000, 1_000, 1_000,
    ]);
  });

  it('a delay is drawn from the upper half of its ceiling: never at once, never past the cap', () => {
    for (const attempt of [1, 2, 3, 4, 5, 9])
      for (const r of [0, 0.25, 0.5, 0.999_999]) {
        const delay = retryDelay(attempt, backoff, () => r);
        const ceiling = backoffCeiling(attempt, backoff);
        expect(delay).toBeGreaterThanOrEqual(ceiling / 2);
        expect(delay).toBeLessThanOrEqual(ceiling);
      }
    expect(retryDelay(1, backoff, () => 0)).toBe(50);
    expect(retryDelay(3, backoff, () => 0.5)).toBe(300);
  });

  it('jitter spreads retries that failed together', () => {
    const delays = new Set(Array.from({ length: 50 }, () => retryDelay(4, backoff)));
    expect(delays.size).toBeGreaterThan(10);
  });

  it('backoffIssues names a bad initialMs or a maxMs below it', () => {
    expect(backoffIssues('retry', backoff)).toEqual([]);
    expect(backoffIssues('retry', { initialMs: 0, maxMs: 10 }).map((i) => i.path)).toEqual([
      'retry.initialMs',
    ]);
    expect(backoffIssues('retry', { initialMs: 20, maxMs: 10 }).map((i) => i.path)).toEqual(['retry.maxMs']);
  });
});
