/** Dispatch over HTTP: the dispatchers work unchanged, and a lost answer never runs a step twice. */
import { DispatchFailedError, ExecutionSupersededError, type WorkerRuntime } from '@skein/worker-runtime';
import { RemoteTimeoutError } from '@skein/worker-runtime-http';
import { LocalDispatcher, SupervisingDispatcher } from '@skein/worker-runtime-local';
import { defineWorkflow } from '@skein/workflow-runtime';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { count, types, until, workers } from './support/worker.js';

const w = workers();
const effects = new Map<string, number>();
const ran = (key: string) => effects.set(key, (effects.get(key) ?? 0) + 1);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const slow = defineWorkflow({
  name: 'slow',
  input: z.object({ ms: z.number() }),
  async run(ctx, input) {
    const first = await ctx.step('first', ({ executionId }) => {
      ran(`${executionId}:first`);
      return 1;
    });
    const second = await ctx.step('slow', async ({ executionId }) => {
      ran(`${executionId}:slow`);
      await sleep(input.ms);
      return 2;
    });
    return { sum: first + second, at: new Date(0) };
  },
});

const workflows = [slow];

describe('RemoteWorkerRuntime under the dispatchers', () => {
  it('LocalDispatcher and SupervisingDispatcher run over HTTP unchanged; codec values round-trip', async () => {
    const served = await w.serve(workflows);
    const dispatcher = new LocalDispatcher({ workers: served.client(), executeTimeoutMs: 5_000 });
    const supervised = new SupervisingDispatcher({ target: dispatcher, maxRestarts: 1 });
    const state = await supervised.dispatch({ executionId: 'plain-1', workflow: 'slow', input: { ms: 1 } });
    expect(state.status).toBe('completed');
    expect(state.output).toEqual({ sum: 3, at: new Date(0) });
    const log = await served.runtime.history('plain-1');
    expect(types(log)).toEqual([
      'EXECUTION_STARTED',
      'STEP_STARTED',
      'STEP_COMPLETED',
      'STEP_STARTED',
      'STEP_COMPLETED',
      'EXECUTION_COMPLETED',
    ]);
    // The worker appended with the fence the client's lease carried (allocate took fence 1).
    expect(log.every((event) => event.fence === 1)).toBe(true);
    expect(await served.client().getExecution('plain-1')).toMatchObject({ status: 'completed', sequence: 5 });
    expect(await served.client().getExecution('missing-1')).toBeNull();
  });

  it('lost answer: the client times out, the worker runs on, and the redispatch joins the run (no step twice)', async () => {
    const served = await w.serve(workflows);
    const late: unknown[] = [];
    const client = served.client({ timeoutMs: 1_500 });
    const attempts: string[] = [];
    // The client, counting how each attempt ended: the step (2 s) outlasts one timeout (1.5 s), not
    // two, with a second of slack for a loaded host.
    const counted: WorkerRuntime = {
      allocate: (pkg) => client.allocate(pkg),
      release: (lease) => client.release(lease),
      execute: (lease, pkg) =>
        client.execute(lease, pkg).then(
          (state) => {
            attempts.push(`fence ${lease.fence}: ${state.status}`);
            return state;
          },
          (error: unknown) => {
            attempts.push(`fence ${lease.fence}: ${(error as Error).name}`);
            throw error;
          },
        ),
    };
    const dispatcher = new LocalDispatcher({
      workers: counted,
      executeTimeoutMs: 5_000,
      maxAttempts: 2,
      onError: (error) => late.push(error),
    });
    const state = await dispatcher.dispatch({
      executionId: 'lost-1',
      workflow: 'slow',
      input: { ms: 2_000 },
    });
    expect(state.status).toBe('completed');
    // The first answer was lost; the second attempt got the same fence and joined the run.
    expect(attempts).toEqual(['fence 1: RemoteTimeoutError', 'fence 1: completed']);
    const log = await served.runtime.history('lost-1');
    expect(count(log, 'EXECUTION_STARTED')).toBe(1);
    expect(count(log, 'EXECUTION_RECOVERED')).toBe(0);
    expect(count(log, 'STEP_STARTED')).toBe(2);
    expect(types(log).at(-1)).toBe('EXECUTION_COMPLETED');
    expect(effects.get('lost-1:first')).toBe(1);
    expect(effects.get('lost-1:slow')).toBe(1);
    expect(late).toEqual([]);
  });

  it('lost answer: a redispatch after the worker finished returns the completed state and writes nothing', async () => {
    const served = await w.serve(workflows);
    const once = new LocalDispatcher({ workers: served.client({ timeoutMs: 100 }), executeTimeoutMs: 5_000 });
    const error = await once
      .dispatch({ executionId: 'lost-2', workflow: 'slow', input: { ms: 300 } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DispatchFailedError);
    expect((error as DispatchFailedError).cause).toBeInstanceOf(RemoteTimeoutError);
    await until(async () => (await served.runtime.loadState('lost-2'))?.status === 'completed');
    const before = await served.runtime.history('lost-2');

    const again = new LocalDispatcher({ workers: served.client(), executeTimeoutMs: 5_000 });
    const state = await again.dispatch({ executionId: 'lost-2', workflow: 'slow', input: { ms: 300 } });
    expect(state.status).toBe('completed');
    expect(await served.runtime.history('lost-2')).toEqual(before);
    expect(count(before, 'EXECUTION_STARTED')).toBe(1);
    expect(effects.get('lost-2:slow')).toBe(1);
  });

  it('a 409 superseded answer naming this execution becomes ExecutionSupersededError; the older lease wrote nothing', async () => {
    const served = await w.serve(workflows);
    await served.runtime.enqueue(slow, { ms: 1 }, { executionId: 'sup-1' });
    const client = served.client();
    const pkg = { executionId: 'sup-1', workflow: 'slow', input: { ms: 1 } };
    const older = await client.allocate(pkg);
    const newer = await client.allocate(pkg);
    expect(newer.fence).toBeGreaterThan(older.fence);
    const error = await client.execute(older, pkg).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ExecutionSupersededError);
    expect((error as ExecutionSupersededError).executionId).toBe('sup-1');
    expect(types(await served.runtime.history('sup-1'))).toEqual(['EXECUTION_STARTED']);
  });
});
