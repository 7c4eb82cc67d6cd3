import { ExecutionSupersededError, isSupersededRefusal } from '@skein/worker-runtime';
import {
  DuplicateSequenceError,
  ExecutionAlreadyExistsError,
  StaleFenceError,
  StartFencedOutError,
  StorageWriteError,
} from '@skein/workflow-runtime';
import { describe, expect, it } from 'vitest';

/** An error as it arrives from another copy of the package or off the wire: only name and fields. */
function foreign(name: string, fields: Record<string, unknown>): Error {
  const error = new Error(`${name} from elsewhere`);
  error.name = name;
  return Object.assign(error, fields);
}

describe('isSupersededRefusal', () => {
  it('ExecutionAlreadyExistsError naming this execution is superseded; naming another is not', () => {
    expect(isSupersededRefusal(new ExecutionAlreadyExistsError('x', 'order'), 'x')).toBe(true);
    expect(isSupersededRefusal(new ExecutionAlreadyExistsError('y', 'order'), 'x')).toBe(false);
  });

  it('StaleFenceError naming this execution, bare or as the cause of a StorageWriteError', () => {
    const stale = new StaleFenceError('x', 1, 2);
    expect(isSupersededRefusal(stale, 'x')).toBe(true);
    expect(isSupersededRefusal(new StorageWriteError('x', { cause: stale }), 'x')).toBe(true);
    expect(
      isSupersededRefusal(new StorageWriteError('x', { cause: new StaleFenceError('y', 1, 2) }), 'x'),
    ).toBe(false);
    expect(isSupersededRefusal(new StorageWriteError('x', { cause: new Error('disk full') }), 'x')).toBe(
      false,
    );
  });

  it('matches by name, not class: errors from another package copy or the wire are recognised', () => {
    expect(isSupersededRefusal(foreign('StaleFenceError', { executionId: 'x' }), 'x')).toBe(true);
    expect(isSupersededRefusal(foreign('ExecutionAlreadyExistsError', { executionId: 'x' }), 'x')).toBe(true);
    const wrapped = foreign('StorageWriteError', { executionId: 'x' });
    wrapped.cause = foreign('StaleFenceError', { executionId: 'x' });
    expect(isSupersededRefusal(wrapped, 'x')).toBe(true);
    // A subclass by class but another name is not matched.
    expect(isSupersededRefusal(new DuplicateSequenceError('x', 3), 'x')).toBe(false);
  });

  it('StartFencedOutError is not superseded (the start never happened), nor are non-errors', () => {
    const fencedOut = new StartFencedOutError('x', 0, 1, { cause: new StaleFenceError('x', 0, 1) });
    expect(isSupersededRefusal(fencedOut, 'x')).toBe(false);
    expect(isSupersededRefusal(undefined, 'x')).toBe(false);
    expect(isSupersededRefusal('StaleFenceError', 'x')).toBe(false);
  });

  it('ExecutionSupersededError keeps its verdict through an outer dispatcher', () => {
    const error = new ExecutionSupersededError('x', { cause: new StaleFenceError('x', 1, 2) });
    expect(error.code).toBe('EXECUTION_SUPERSEDED');
    expect(error.toJSON()).toEqual({
      code: 'EXECUTION_SUPERSEDED',
      name: 'ExecutionSupersededError',
      message: error.message,
      executionId: 'x',
      cause: {
        code: 'STALE_FENCE',
        name: 'StaleFenceError',
        message: 'execution "x": fence 1 is stale; the current fence is 2',
        executionId: 'x',
      },
    });
    expect(isSupersededRefusal(error, 'x')).toBe(true);
    expect(isSupersededRefusal(error, 'y')).toBe(false);
  });
});
