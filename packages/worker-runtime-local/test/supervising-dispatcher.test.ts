import {
  CircuitOpenError,
  type ExecutionDispatcher,
  type ExecutionResult,
  ExecutionSupersededError,
} from '@skein/worker-runtime';
import {
  CircuitBreaker,
  LocalDispatcher,
  LocalWorkerRuntime,
  SupervisingDispatcher,
} from '@skein/worker-runtime-local';
import { defineWorkflow, StaleFenceError } from '@skein/workflow-runtime';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { harness, manualClock, types } from './support/sqlite.js';

const h = harness();

/** A dispatcher that fails its first `failures` dispatches, then runs the real one. */
function flaky(real: ExecutionDispatcher, failures: number): ExecutionDispatcher & { calls: number } {
  const target = {
    calls: 0,
    async dispatch(pkg: Parameters<ExecutionDispatcher['dispatch']>[0]): Promise<ExecutionResult> {
      target.calls += 1;
      if (target.calls <= failures) throw new Error(`worker crashed (call ${target.calls})`);
      return real.dispatch(pkg);
    },
  };
  return target;
}

const superseding = (id: string) => ({
  calls: 0,
  async dispatch(): Promise<ExecutionResult> {
    this.calls += 1;
    throw new ExecutionSupersededError(id, { cause: new StaleFenceError(id, 1, 2) });
  },
});

const once = defineWorkflow({
  name: 'once',
  input: z.object({}),
  async run(ctx) {
    return ctx.step('only', () => 'done');
  },
});

describe('SupervisingDispatcher', () => {
  it('restarts a failed dispatch up to maxRestarts, and the restarted dispatch completes the execution', async () => {
    const db = h.db();
    const runtime = h.runtime({ stores: db.stores, workflows: [once] });
    const real = new LocalDispatcher({
      workers: new LocalWorkerRuntime({ runtime }),
      executeTimeoutMs: 5_000,
    });
    const target = flaky(real, 2);
    const supervised = new SupervisingDispatcher({ target, maxRestarts: 2 });
    const state = await supervised.dispatch({ executionId: 'r-1', workflow: 'once', input: {} });
    expect(state.status).toBe('completed');
    expect(target.calls).toBe(3);
    expect(types(await runtime.history('r-1'))).toEqual([
      'EXECUTION_STARTED',
      'STEP_STARTED',
      'STEP_COMPLETED',
      'EXECUTION_COMPLETED',
    ]);
  });

  it('maxRestarts defaults to 0: one failure surfaces as it is', async () => {
    const target = flaky({ dispatch: () => Promise.reject(new Error('unused')) }, 1);
    const supervised = new SupervisingDispatcher({ target });
    await expect(supervised.dispatch({ executionId: 'r-2', workflow: 'once' })).rejects.toThrow(
      'worker crashed (call 1)',
    );
    expect(target.calls).toBe(1);
  });

  it('the circuit opens after N consecutive failures, refuses while open, and half-opens after the cool-down', async () => {
    const clock = manualClock();
    const db = h.db();
    const runtime = h.runtime({ stores: db.stores, workflows: [once] });
    const real = new LocalDispatcher({
      workers: new LocalWorkerRuntime({ runtime }),
      executeTimeoutMs: 5_000,
    });
    const target = flaky(real, 3);
    const supervised = new SupervisingDispatcher({
      target,
      circuit: { failureThreshold: 3, coolDownMs: 1_000, clock: clock.now },
    });
    for (let i = 0; i < 3; i++)
      await expect(supervised.dispatch({ executionId: 'c-1', workflow: 'once' })).rejects.toThrow();
    expect(supervised.circuit.state).toBe('open');
    const refused = await supervised
      .dispatch({ executionId: 'c-1', workflow: 'once' })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(CircuitOpenError);
    expect(target.calls).toBe(3);
    expect(await runtime.history('c-1')).toEqual([]);

    clock.advance(1_000);
    expect(supervised.circuit.state).toBe('half-open');
    const state = await supervised.dispatch({ executionId: 'c-1', workflow: 'once', input: {} });
    expect(state.status).toBe('completed');
    expect(supervised.circuit.state).toBe('closed');
  });

  it('a failed trial in half-open opens the circuit again at once', () => {
    const clock = manualClock();
    const circuit = new CircuitBreaker({ failureThreshold: 2, coolDownMs: 500, clock: clock.now });
    circuit.failure();
    circuit.failure();
    clock.advance(500);
    circuit.admit('x');
    expect(() => circuit.admit('x')).toThrow(CircuitOpenError); // one trial at a time
    circuit.failure();
    expect(circuit.state).toBe('open');
  });

  it('a superseded refusal neither restarts nor counts against the circuit', async () => {
    const target = superseding('s-1');
    const supervised = new SupervisingDispatcher({
      target,
      maxRestarts: 3,
      circuit: { failureThreshold: 1 },
    });
    for (let i = 0; i < 3; i++) {
      const error = await supervised
        .dispatch({ executionId: 's-1', workflow: 'once' })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(ExecutionSupersededError);
    }
    expect(target.calls).toBe(3);
    expect(supervised.circuit.state).toBe('closed');
    expect(supervised.circuit.consecutiveFailures).toBe(0);
  });

  it('L7: bad options are refused', () => {
    expect(() => new SupervisingDispatcher({ target: {} as ExecutionDispatcher })).toThrow(/target/);
    expect(() => new SupervisingDispatcher({ target: superseding('x'), maxRestarts: -1 })).toThrow(
      /maxRestarts/,
    );
    expect(() => new CircuitBreaker({ failureThreshold: 0 })).toThrow(/failureThreshold/);
  });
});
