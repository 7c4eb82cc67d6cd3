/**
 * A Supervisor on PostgreSQL takes and gives back the leases of a burst of pending executions
 * in batches (`LeaseStore.claimMany`, `releaseMany`): one round trip for many executions, and
 * every lease is given back once the runs have ended.
 */
import { openPostgresStores } from '@skein/store-postgres';
import { Supervisor } from '@skein/worker-runtime-local';
import { createRuntime, defineWorkflow, type EventStore, type LeaseStore } from '@skein/workflow-runtime';
import { executionLeaseKey } from '@skein/workflow-runtime/internal';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { dropSchema, freshSchema, PG_URL, whenPostgres } from './support/pg.js';

const quick = defineWorkflow({
  name: 'quick',
  input: z.object({ n: z.number() }),
  async run(ctx, input) {
    return ctx.step('only', () => input.n + 1);
  },
});

/** Calls per method of `events` (every call). */
function countedEvents(events: EventStore): { events: EventStore; calls: Map<string, number> } {
  const calls = new Map<string, number>();
  const proxy = new Proxy(events, {
    get(inner, key, receiver) {
      const value = Reflect.get(inner, key, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        calls.set(String(key), (calls.get(String(key)) ?? 0) + 1);
        return (value as (...a: unknown[]) => unknown).apply(inner, args);
      };
    },
  });
  return { events: proxy, calls };
}

/** Calls per method of `leases` on execution lease keys (the leader's lease left out). */
function counted(leases: LeaseStore): { leases: LeaseStore; calls: Map<string, number> } {
  const calls = new Map<string, number>();
  const proxy = new Proxy(leases, {
    get(inner, key, receiver) {
      const value = Reflect.get(inner, key, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        const first = args[0];
        const onExecution =
          Array.isArray(first) || (typeof first === 'string' && first.startsWith('execution'));
        if (onExecution) calls.set(String(key), (calls.get(String(key)) ?? 0) + 1);
        return (value as (...a: unknown[]) => unknown).apply(inner, args);
      };
    },
  });
  return { leases: proxy, calls };
}

whenPostgres(() => {
  describe('postgres: a supervisor batches its lease claims and releases', () => {
    it('a burst of 40 pending executions is claimed in a few claimMany calls, taken over in as few takeOverPending calls, and every lease is given back', async () => {
      const schema = freshSchema();
      const stores = await openPostgresStores({ url: PG_URL, schema, poolSize: 4 });
      const errors: unknown[] = [];
      try {
        const { leases, calls } = counted(stores.leases);
        const counting = countedEvents(stores.events);
        const supervised = { ...stores, leases, events: counting.events };
        const runtime = createRuntime({
          stores: supervised,
          workflows: [quick],
          lease: { ttlMs: 30_000 },
          maintenance: false,
          onError: (e) => errors.push(e),
        });
        const handles = [];
        for (let i = 0; i < 40; i++)
          handles.push(await runtime.enqueue(quick, { n: i }, { executionId: `b-${i}` }));
        const supervisor = new Supervisor({
          runtime,
          stores: supervised,
          leaseTtlMs: 30_000,
          tickIntervalMs: 10_000,
          concurrency: 40,
          onError: (e) => errors.push(e),
        });
        supervisor.start();
        try {
          expect(await Promise.all(handles.map((handle) => handle.result()))).toEqual(
            Array.from({ length: 40 }, (_, i) => i + 1),
          );
        } finally {
          await supervisor.stop();
          await runtime.close();
        }
        expect(calls.get('claim') ?? 0).toBe(0);
        expect(calls.get('claimMany')).toBeGreaterThanOrEqual(1);
        expect(calls.get('claimMany')).toBeLessThanOrEqual(4);
        // The fences and the logs came with the claims: no run took a fence of its own.
        expect(counting.calls.get('takeOverPending')).toBeGreaterThanOrEqual(1);
        expect(counting.calls.get('takeOverPending')).toBeLessThanOrEqual(calls.get('claimMany')!);
        expect(counting.calls.get('acquireFence') ?? 0).toBe(0);
        expect(calls.get('release') ?? 0).toBe(0);
        expect(calls.get('releaseMany')).toBeGreaterThanOrEqual(1);
        for (let i = 0; i < 40; i++) expect(await stores.leases.get(executionLeaseKey(`b-${i}`))).toBeNull();
        expect(errors).toEqual([]);
      } finally {
        await stores.close();
        await dropSchema(schema);
      }
    });
  });
});
