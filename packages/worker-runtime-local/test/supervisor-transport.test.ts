/**
 * The outbox's first consumer: a runtime with `outbox: true` writes `execution.pending` in the
 * append of seq 0 (O1), and a `Supervisor({ transport })` runs the work it hears of, with
 * polling only as the fallback. Real SQLite files; the StoreTransport reads their outbox.
 */
import { StoreTransport, Supervisor } from '@skein/worker-runtime-local';
import { createRuntime, defineWorkflow, InvalidInputError, openMemoryStores } from '@skein/workflow-runtime';
import { executionLeaseKey } from '@skein/workflow-runtime/internal';
import { EXECUTION_PENDING_TOPIC } from '@skein/workflow-runtime/spi';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { harness, until } from './support/sqlite.js';

const h = harness();
const effects = new Map<string, number>();

const job = defineWorkflow({
  name: 'job',
  input: z.object({ n: z.number() }),
  async run(ctx, input) {
    return ctx.step('work', ({ executionId }) => {
      effects.set(executionId, (effects.get(executionId) ?? 0) + 1);
      return input.n * 2;
    });
  },
});

describe('outbox: enqueue', () => {
  it('O1: enqueue writes execution.pending with seq 0, in one append; a refused enqueue writes no message', async () => {
    const { stores } = h.db();
    const runtime = h.runtime({ stores, workflows: [job], outbox: true });
    await runtime.enqueue(job, { n: 1 }, { executionId: 'e1' });
    const [message] = await stores.outbox!.list();
    expect(message).toMatchObject({ topic: EXECUTION_PENDING_TOPIC, key: 'e1', status: 'pending' });
    expect(JSON.parse(message!.payload)).toEqual({ executionId: 'e1', workflow: 'job', version: 1 });
    expect((await stores.events.read('e1')).map((e) => e.type)).toEqual(['EXECUTION_STARTED']);
    // The same id again: seq 0 is taken, the append is refused, and its message with it.
    await runtime.enqueue(job, { n: 1 }, { executionId: 'e1' });
    await expect(runtime.enqueue(job, { n: 'x' } as never, { executionId: 'e2' })).rejects.toThrow(
      InvalidInputError,
    );
    expect(await stores.outbox!.list()).toHaveLength(1);
    // start runs here and now: no message.
    await (await runtime.start(job, { n: 2 }, { executionId: 'e3' })).result();
    expect(await stores.outbox!.list()).toHaveLength(1);
  });

  it('L7: outbox: true on stores without an outbox is refused, naming the option', () => {
    const { outbox: _, ...bare } = openMemoryStores();
    expect(() => createRuntime({ stores: bare, workflows: [job], outbox: true })).toThrow(/outbox/);
  });
});

describe('outbox: Supervisor({ transport })', () => {
  it('runs enqueued work it hears of through the transport, long before its next poll', async () => {
    const db = h.db();
    const runtime = h.runtime({
      stores: db.stores,
      workflows: [job],
      outbox: true,
      lease: { ttlMs: 60_000 },
    });
    const transport = new StoreTransport({ stores: db.stores, pollIntervalMs: 20 });
    const errors: unknown[] = [];
    const supervisor = new Supervisor({
      runtime,
      stores: db.stores,
      transport,
      tickIntervalMs: 30_000,
      onError: (error) => errors.push(error),
    });
    supervisor.start();
    await supervisor.listening();
    await supervisor.tick(); // the start's own tick is done: from here on only the transport brings news
    const started = Date.now();
    const ids = Array.from({ length: 20 }, (_, i) => `heard-${i}`);
    for (const [i, id] of ids.entries()) await runtime.enqueue(job, { n: i }, { executionId: id });
    try {
      await until(async () => {
        const states = await Promise.all(ids.map((id) => runtime.loadState(id)));
        return states.every((state) => state?.status === 'completed');
      }, 10_000);
    } finally {
      await supervisor.stop();
      await transport.close();
    }
    expect(Date.now() - started).toBeLessThan(10_000);
    for (const id of ids) expect(effects.get(id)).toBe(1);
    expect(errors).toEqual([]);
    expect((await db.stores.outbox!.list({ status: 'published' })).length).toBe(20);
  });

  it('a heard execution whose lease another node holds is acked and left alone, with no error', async () => {
    const db = h.db();
    const runtime = h.runtime({
      stores: db.stores,
      workflows: [job],
      outbox: true,
      lease: { ttlMs: 60_000 },
    });
    const transport = new StoreTransport({ stores: db.stores, pollIntervalMs: 10 });
    const errors: unknown[] = [];
    const supervisor = new Supervisor({
      runtime,
      stores: db.stores,
      transport,
      tickIntervalMs: 30_000,
      onError: (error) => errors.push(error),
    });
    await db.stores.leases.claim(executionLeaseKey('held'), 'another-node', 60_000, Date.now());
    supervisor.start();
    await supervisor.listening();
    await supervisor.tick();
    await runtime.enqueue(job, { n: 1 }, { executionId: 'held' });
    try {
      await until(async () => (await db.stores.outbox!.list({ status: 'published' })).length === 1, 5_000);
    } finally {
      await supervisor.stop();
      await transport.close();
    }
    expect((await runtime.loadState('held'))?.status).toBe('pending');
    expect(effects.get('held')).toBeUndefined();
    expect(errors).toEqual([]);
  });

  it('two nodes racing for the same work: each runs once, and a lost claim is never reported as an error', async () => {
    const db = h.db();
    const nodes = ['a', 'b'].map((name) => {
      const stores = db.connect();
      const runtime = h.runtime({
        stores,
        workflows: [job],
        outbox: true,
        lease: { ttlMs: 5_000 },
        nodeId: name,
      });
      const transport = new StoreTransport({ stores, pollIntervalMs: 5 });
      const errors: unknown[] = [];
      // Polling fast as well, so the tick's claims and the heard claims race each other.
      const supervisor = new Supervisor({
        runtime,
        stores,
        transport,
        tickIntervalMs: 10,
        onError: (error) => errors.push(error),
      });
      return { runtime, transport, supervisor, errors };
    });
    for (const node of nodes) node.supervisor.start();
    await Promise.all(nodes.map((node) => node.supervisor.listening()));
    const ids = Array.from({ length: 40 }, (_, i) => `race-${i}`);
    await Promise.all(ids.map((id, i) => nodes[i % 2]!.runtime.enqueue(job, { n: i }, { executionId: id })));
    try {
      await until(async () => {
        const states = await Promise.all(ids.map((id) => nodes[0]!.runtime.loadState(id)));
        return states.every((state) => state?.status === 'completed');
      }, 20_000);
    } finally {
      for (const node of nodes) {
        await node.supervisor.stop();
        await node.transport.close();
      }
    }
    for (const id of ids) expect(effects.get(id)).toBe(1);
    expect(nodes.flatMap((node) => node.errors)).toEqual([]);
  });
});
