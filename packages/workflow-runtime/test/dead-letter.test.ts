import {
  defineWorkflow,
  type EndedPayload,
  ExecutionNotFoundError,
  type LeaseStore,
} from '@skein/workflow-runtime';
import { executionLeaseKey } from '@skein/workflow-runtime/internal';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { backings, deferred, harness, types, until } from './support/stores.js';

let gate = deferred();
const stuck = defineWorkflow({
  name: 'stuck',
  input: z.object({}),
  async run(ctx) {
    await ctx.sleep('later', 60_000);
    return ctx.step('never', () => gate.promise);
  },
});
const running = defineWorkflow({
  name: 'running',
  input: z.object({}),
  async run(ctx) {
    return ctx.step('hold', () => gate.promise);
  },
});

describe.each(backings)('runtime.deadLetter over %s', (_name, open) => {
  const h = harness(open);

  it('L6: appends EXECUTION_DEAD_LETTERED under a fresh fence, fences the running owner out, and completes timers', async () => {
    gate = deferred();
    const { stores } = h.open();
    const runtime = h.runtime({ stores, workflows: [stuck, running] });
    await runtime.start(stuck, {}, { executionId: 'sleeping' });
    await until(async () => (await runtime.loadState('sleeping'))?.status === 'suspended');
    expect(await stores.timers.forExecution('sleeping')).toHaveLength(1);
    await runtime.start(running, {}, { executionId: 'busy' });
    await until(async () => types(await runtime.history('busy')).includes('STEP_STARTED'));

    expect(await runtime.deadLetter('sleeping', 'operator: poison')).toBe(true);
    expect(await runtime.deadLetter('busy', 'operator: poison')).toBe(true);
    const log = await runtime.history('busy');
    const last = log.at(-1)!;
    expect(last.type).toBe('EXECUTION_DEAD_LETTERED');
    expect((last.payload as EndedPayload).reason).toBe('operator: poison');
    expect(last.fence).toBeGreaterThan(log[0]!.fence);
    expect(await stores.timers.forExecution('sleeping')).toEqual([]);
    expect((await runtime.loadState('sleeping'))?.status).toBe('dead_lettered');
    // Already terminal: nothing more is written.
    expect(await runtime.deadLetter('busy', 'again')).toBe(false);
    expect(await runtime.history('busy')).toHaveLength(log.length);
    await expect(runtime.deadLetter('missing', 'x')).rejects.toThrow(ExecutionNotFoundError);
    await expect(runtime.deadLetter('busy', '')).rejects.toThrow(/reason/);
    // The fenced-out owner's step returns; its append is refused and writes nothing.
    gate.resolve();
    await until(async () => (await runtime.handle('busy').state())?.status === 'dead_lettered');
    expect(await runtime.history('busy')).toHaveLength(log.length);
  });

  it('its cleanup is best-effort: a failing lease store is reported and the dead-letter still lands', async () => {
    const { stores } = h.open();
    const leases: LeaseStore = {
      ...stores.leases,
      claim: (...args) => stores.leases.claim(...args),
      get: (key) => stores.leases.get(key),
      release: () => Promise.reject(new Error('lease store down')),
    };
    const runtime = h.runtime({
      stores: { ...stores, leases },
      workflows: [stuck, running],
      maintenance: false,
    });
    await runtime.enqueue(running, {}, { executionId: 'pending-1' });
    expect(await runtime.deadLetter('pending-1', 'supervisor tick: gave up')).toBe(true);
    expect(types(await runtime.history('pending-1'))).toEqual([
      'EXECUTION_STARTED',
      'EXECUTION_DEAD_LETTERED',
    ]);
    expect(h.backgroundErrors.map((e) => (e as Error).message)).toEqual(['lease store down']);
    expect(await stores.leases.get(executionLeaseKey('pending-1'))).toBeNull();
  });
});
