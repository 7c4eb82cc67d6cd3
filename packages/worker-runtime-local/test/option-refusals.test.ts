/** Options outside a schema are refused one way: `InvalidInputError` naming the call and the field. */
import { CircuitBreaker, leaseExpired } from '@skein/worker-runtime-local';
import { InvalidInputError } from '@skein/workflow-runtime';
import { describe, expect, it } from 'vitest';

function refusal(make: () => unknown): InvalidInputError {
  try {
    make();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidInputError);
    return error as InvalidInputError;
  }
  throw new Error('the options were accepted');
}

describe('option refusals', () => {
  it.each([
    [{ failureThreshold: 0 }, 'circuit.failureThreshold'],
    [{ failureThreshold: 1.5 }, 'circuit.failureThreshold'],
    [{ coolDownMs: -1 }, 'circuit.coolDownMs'],
    [{ coolDownMs: Number.NaN }, 'circuit.coolDownMs'],
    [{ clock: 5 }, 'circuit.clock'],
  ])('CircuitBreaker(%o) is refused at %s', (options, path) => {
    const error = refusal(() => new CircuitBreaker(options as never));
    expect(error.where).toBe('circuit breaker options');
    expect(error.issues.map((issue) => issue.path)).toEqual([path]);
  });

  it.each([0, -5, Number.POSITIVE_INFINITY, '10'])('leaseExpired({ ttlMs: %o }) is refused', (ttlMs) => {
    const error = refusal(() => leaseExpired({ leases: {} as never }, { ttlMs: ttlMs as never }));
    expect(error.where).toBe('leaseExpired options');
    expect(error.issues[0]?.path).toBe('ttlMs');
  });

  it('defaults stand when nothing is given', () => {
    expect(new CircuitBreaker().state).toBe('closed');
    expect(typeof leaseExpired({ leases: {} as never })).toBe('function');
  });
});
