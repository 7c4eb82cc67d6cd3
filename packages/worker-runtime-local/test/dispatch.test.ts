import {
  DispatchFailedError,
  ExecutionSupersededError,
  isSupersededRefusal,
  type WorkerRuntime,
} from '@skein/worker-runtime';
import { LocalDispatcher, LocalWorkerRuntime } from '@skein/worker-runtime-local';
import {
  defineWorkflow,
  InvalidInputError,
  StartFencedOutError,
  tenantScopedStores,
} from '@skein/workflow-runtime';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { count, deferred, harness, types, until } from './support/sqlite.js';

const h = harness();
const effects = new Map<string, number>();
const ran = (key: string) => effects.set(key, (effects.get(key) ?? 0) + 1);

let hang = deferred();
const hangOnce = defineWorkflow({
  name: 'hang-once',
  input: z.object({}),
  async run(ctx) {
    return ctx.step('work', async ({ executionId }) => {
      ran(executionId);
      if ((effects.get(executionId) ?? 0) === 1) await hang.promise;
      return 'done';
    });
  },
});

const fails = defineWorkflow({
  name: 'fails',
  input: z.object({}),
  async run(ctx) {
    await ctx.step('effect', ({ executionId }) => void ran(executionId));
    throw new Error('the order was refused');
  },
});

let gate = deferred();
const gated = defineWorkflow({
  name: 'gated',
  input: z.object({}),
  async run(ctx) {
    return ctx.step('effect', async ({ executionId }) => {
      ran(executionId);
      await gate.promise;
      return 'ok';
    });
  },
});

const workflows = [hangOnce, fails, gated];

describe('LocalDispatcher', () => {
  it('a hung worker past its deadline is redispatched under a newer fence, and the second attempt completes', async () => {
    hang = deferred();
    const db = h.db();
    const runtime = h.runtime({ stores: db.stores, workflows });
    const late: unknown[] = [];
    const dispatcher = new LocalDispatcher({
      workers: new LocalWorkerRuntime({ runtime }),
      executeTimeoutMs: 150,
      maxAttempts: 2,
      onError: (error) => late.push(error),
    });
    const state = await dispatcher.dispatch({ executionId: 'hung-1', workflow: 'hang-once', input: {} });
    expect(state.status).toBe('completed');
    const log = await runtime.history('hung-1');
    expect(types(log)).toEqual([
      'EXECUTION_STARTED',
      'STEP_STARTED',
      'EXECUTION_RECOVERED',
      'STEP_STARTED',
      'STEP_COMPLETED',
      'EXECUTION_COMPLETED',
    ]);
    // Each attempt appended under its own fence: allocate acquired a new one each time.
    expect(log[0]!.fence).toBe(1);
    expect(log[2]!.fence).toBe(2);

    // The hung attempt wakes up: its append is fenced out and writes nothing.
    hang.resolve();
    await until(async () => (await db.stores.events.currentFence('hung-1')) === 2);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(types(await runtime.history('hung-1'))).toHaveLength(6);
    expect(late).toEqual([]);
  });

  it('a workflow that ends failed is returned, not retried', async () => {
    const db = h.db();
    const runtime = h.runtime({ stores: db.stores, workflows });
    const dispatcher = new LocalDispatcher({
      workers: new LocalWorkerRuntime({ runtime }),
      executeTimeoutMs: 5_000,
      maxAttempts: 3,
    });
    const state = await dispatcher.dispatch({ executionId: 'fails-1', workflow: 'fails', input: {} });
    expect(state.status).toBe('failed');
    const log = await runtime.history('fails-1');
    expect(count(log, 'EXECUTION_STARTED')).toBe(1);
    expect(count(log, 'EXECUTION_RECOVERED')).toBe(0);
    expect(types(log).at(-1)).toBe('EXECUTION_FAILED');
    expect(effects.get('fails-1')).toBe(1);
  });

  it('an attempt that throws is dispatched again; after the last one the dispatch fails naming the attempts', async () => {
    const db = h.db();
    const runtime = h.runtime({ stores: db.stores, workflows });
    let allocations = 0;
    const broken: WorkerRuntime = {
      allocate: async () => {
        allocations += 1;
        throw new Error('worker unreachable');
      },
      execute: () => Promise.reject(new Error('unreachable')),
      release: async () => undefined,
    };
    const dispatcher = new LocalDispatcher({ workers: broken, executeTimeoutMs: 1_000, maxAttempts: 3 });
    const error = await dispatcher
      .dispatch({ executionId: 'broken-1', workflow: 'fails', input: {} })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DispatchFailedError);
    expect((error as DispatchFailedError).attempts).toBe(3);
    expect(allocations).toBe(3);
    expect(await runtime.history('broken-1')).toEqual([]);
  });

  it('L7: a bad package or bad options are refused before anything is written', async () => {
    const db = h.db();
    const runtime = h.runtime({ stores: db.stores, workflows });
    const workers = new LocalWorkerRuntime({ runtime });
    expect(() => new LocalDispatcher({ workers, executeTimeoutMs: 0 })).toThrow(/executeTimeoutMs/);
    expect(() => new LocalDispatcher({ workers, executeTimeoutMs: 10, maxAttempts: 1.5 })).toThrow(
      /maxAttempts/,
    );
    const dispatcher = new LocalDispatcher({ workers, executeTimeoutMs: 1_000 });
    const error = await dispatcher.dispatch({ executionId: '', workflow: 'fails' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidInputError);
    expect(String(error)).toContain('package.executionId');
    expect((await db.stores.events.listExecutions()).items).toEqual([]);
    expect(await db.stores.events.currentFence('')).toBe(0);
  });
});

describe('superseded refusals', () => {
  it('the sequence-0 race of two dispatchers: the step runs once, one fence each, the loser is superseded', async () => {
    gate = deferred();
    gate.resolve();
    const db = h.db();
    const a = h.runtime({ stores: db.stores, workflows });
    const b = h.runtime({ stores: db.connect(), workflows });
    const dispatch = (runtime: typeof a) =>
      new LocalDispatcher({
        workers: new LocalWorkerRuntime({ runtime }),
        executeTimeoutMs: 5_000,
        maxAttempts: 3,
      }).dispatch({ executionId: 'race-0', workflow: 'gated', input: {} });
    const outcomes = await Promise.allSettled([dispatch(a), dispatch(b)]);
    const rejected = outcomes.filter((o) => o.status === 'rejected');
    for (const o of rejected)
      expect((o as PromiseRejectedResult).reason).toBeInstanceOf(ExecutionSupersededError);
    expect(outcomes.some((o) => o.status === 'fulfilled' && o.value.status === 'completed')).toBe(true);
    expect(await a.handle('race-0').result()).toBe('ok');

    const log = await a.history('race-0');
    expect(count(log, 'EXECUTION_STARTED')).toBe(1);
    expect(count(log, 'EXECUTION_RECOVERED')).toBe(0);
    expect(effects.get('race-0')).toBe(1);
    // No ping-pong: two allocations, and the start-only retry took no new fence.
    expect(await db.stores.events.currentFence('race-0')).toBeLessThanOrEqual(2);
  });

  it('a duplicate dispatch after bootstrap: the effect runs at most twice, the first holder is superseded and awaits by id', async () => {
    gate = deferred();
    const db = h.db();
    const a = h.runtime({ stores: db.stores, workflows });
    const b = h.runtime({ stores: db.connect(), workflows });
    const dispatcherA = new LocalDispatcher({
      workers: new LocalWorkerRuntime({ runtime: a }),
      executeTimeoutMs: 5_000,
      maxAttempts: 3,
    });
    const dispatcherB = new LocalDispatcher({
      workers: new LocalWorkerRuntime({ runtime: b }),
      executeTimeoutMs: 5_000,
      maxAttempts: 3,
    });
    const first = dispatcherA
      .dispatch({ executionId: 'dup-1', workflow: 'gated', input: {} })
      .catch((e: unknown) => e);
    await until(() => effects.get('dup-1') === 1);
    const second = dispatcherB.dispatch({ executionId: 'dup-1', workflow: 'gated', input: {} });
    await until(() => effects.get('dup-1') === 2);
    gate.resolve();
    expect((await second).status).toBe('completed');
    const refused = await first;
    expect(refused).toBeInstanceOf(ExecutionSupersededError);
    expect((refused as ExecutionSupersededError).executionId).toBe('dup-1');
    expect(isSupersededRefusal((refused as Error).cause, 'dup-1')).toBe(true);
    expect(await a.handle('dup-1').result()).toBe('ok');

    const log = await a.history('dup-1');
    expect(count(log, 'EXECUTION_STARTED')).toBe(1);
    expect(count(log, 'EXECUTION_RECOVERED')).toBe(1);
    expect(count(log, 'EXECUTION_COMPLETED')).toBe(1);
    expect(effects.get('dup-1')).toBe(2);
    expect(await db.stores.events.currentFence('dup-1')).toBe(2);
  });

  it('StartFencedOutError is not superseded: the start is retried and completes', async () => {
    gate = deferred();
    gate.resolve();
    const db = h.db();
    const runtime = h.runtime({ stores: db.stores, workflows });
    const local = new LocalWorkerRuntime({ runtime });
    const seen: unknown[] = [];
    let fencedOut = false;
    // A holder takes a fence after our allocation and never writes seq 0.
    const workers: WorkerRuntime = {
      allocate: (pkg) => local.allocate(pkg),
      execute: async (lease, pkg) => {
        if (!fencedOut) {
          fencedOut = true;
          await db.stores.events.acquireFence(pkg.executionId);
        }
        return local.execute(lease, pkg).catch((error: unknown) => {
          seen.push(error);
          throw error;
        });
      },
      release: (lease) => local.release(lease),
    };
    const dispatcher = new LocalDispatcher({ workers, executeTimeoutMs: 5_000, maxAttempts: 2 });
    const state = await dispatcher.dispatch({ executionId: 'fenced-1', workflow: 'gated', input: {} });
    expect(state.status).toBe('completed');
    expect(seen).toHaveLength(1);
    expect(seen[0]).toBeInstanceOf(StartFencedOutError);
    expect(isSupersededRefusal(seen[0], 'fenced-1')).toBe(false);
    const log = await runtime.history('fenced-1');
    expect(count(log, 'EXECUTION_STARTED')).toBe(1);
    expect(log[0]!.fence).toBe(2);
    expect(effects.get('fenced-1')).toBe(1);
  });
});

describe('superseded refusals under tenancy', () => {
  it('a refusal re-raised by TenantScopedEventStore is still superseded for the unscoped id (no ping-pong)', async () => {
    gate = deferred();
    const db = h.db();
    const scoped = (stores: typeof db.stores) => tenantScopedStores(stores, 'acme');
    const a = h.runtime({ stores: scoped(db.stores), workflows, snapshotEvery: 0 });
    const b = h.runtime({ stores: scoped(db.connect()), workflows, snapshotEvery: 0 });
    const dispatcher = (runtime: typeof a) =>
      new LocalDispatcher({
        workers: new LocalWorkerRuntime({ runtime }),
        executeTimeoutMs: 5_000,
        maxAttempts: 3,
      });
    const first = dispatcher(a)
      .dispatch({ executionId: 'tenant-1', workflow: 'gated', input: {} })
      .catch((e: unknown) => e);
    await until(() => effects.get('tenant-1') === 1);
    const second = dispatcher(b).dispatch({ executionId: 'tenant-1', workflow: 'gated', input: {} });
    await until(() => effects.get('tenant-1') === 2);
    gate.resolve();
    expect((await second).status).toBe('completed');
    const refused = (await first) as ExecutionSupersededError;
    expect(refused).toBeInstanceOf(ExecutionSupersededError);
    expect(refused.executionId).toBe('tenant-1');
    expect(isSupersededRefusal(refused.cause, 'tenant-1')).toBe(true);
    expect(await db.stores.events.currentFence('acme/tenant-1')).toBe(2);
    expect(count(await a.history('tenant-1'), 'EXECUTION_RECOVERED')).toBe(1);
  });
});
