/**
 * Wake-ups: a NOTIFY sent by another connection reaches a subscriber promptly; scheduling a
 * timer notifies the `timers` channel; an append with outbox messages and an outbox write
 * notify the `outbox` channel; schemas do not hear each other; a lost LISTEN connection
 * reconnects.
 */
import {
  InvalidWakeupChannelError,
  type PostgresStores,
  WAKEUP_OUTBOX,
  WAKEUP_TIMERS,
} from '@skein/store-postgres';
import { newId } from '@skein/workflow-runtime/internal';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { freshSchema, openTestStores, PG_URL, whenPostgres } from './support/pg.js';

const opened: PostgresStores[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((stores) => stores.close()));
});

async function open(options: Parameters<typeof openTestStores>[0] = {}): Promise<PostgresStores> {
  const stores = await openTestStores(options);
  opened.push(stores);
  return stores;
}

/** Resolves with the first payload `stores` hears on `channel` after subscribing, within 5 s. */
async function nextPayload(stores: PostgresStores, channel: string): Promise<{ payload: Promise<string> }> {
  let resolve!: (payload: string) => void;
  const payload = new Promise<string>((r) => {
    resolve = r;
  });
  await stores.wakeups.subscribe(channel, resolve);
  const timeout = new Promise<string>((_, reject) =>
    setTimeout(() => reject(new Error(`no notification on ${channel} within 5 s`)), 5000).unref(),
  );
  return { payload: Promise.race([payload, timeout]) };
}

async function rawNotify(channel: string, payload: string): Promise<void> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    await client.query('SELECT pg_notify($1, $2)', [channel, payload]);
  } finally {
    await client.end();
  }
}

whenPostgres(() => {
  describe('postgres wake-ups', () => {
    it('a subscriber hears a NOTIFY sent through another process’s stores', async () => {
      const listener = await open();
      const sender = await open({ schema: listener.schema });
      const heard = await nextPayload(listener, 'work');
      await sender.wakeups.notify('work', 'hello');
      expect(await heard.payload).toBe('hello');
    });

    it('scheduling a new timer on one node wakes a subscriber on another with its due time', async () => {
      const supervisor = await open();
      const node = await open({ schema: supervisor.schema });
      const heard = await nextPayload(supervisor, WAKEUP_TIMERS);
      await node.timers.schedule({ timerId: 't-1', executionId: 'e', dueAt: 1_700_000_123_456 });
      expect(await heard.payload).toBe('1700000123456');
    });

    it('a schema hears only its own channels', async () => {
      const a = await open();
      const b = await open();
      const payloads: string[] = [];
      await a.wakeups.subscribe('work', (payload) => payloads.push(payload));
      const heard = await nextPayload(a, 'done');
      // One session's notifications arrive in order: once "done" is heard, b's would have been too.
      const client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
      await client.query('SELECT pg_notify($1, $2), pg_notify($3, $4), pg_notify($5, $6)', [
        `${b.schema}.work`,
        'for b',
        `${a.schema}.work`,
        'for a',
        `${a.schema}.done`,
        'end',
      ]);
      await client.end();
      expect(await heard.payload).toBe('end');
      expect(payloads).toEqual(['for a']);
    });

    it('an unsubscribed handler hears nothing more; the other handlers of the channel still do', async () => {
      const stores = await open();
      const first: string[] = [];
      const stop = await stores.wakeups.subscribe('work', (payload) => first.push(payload));
      const heard = await nextPayload(stores, 'work');
      await stop();
      await stores.wakeups.notify('work', 'after');
      expect(await heard.payload).toBe('after');
      expect(first).toEqual([]);
    });

    it('a lost LISTEN connection is reported, reconnects, and hears notifications again', async () => {
      const errors: unknown[] = [];
      const stores = await open({ onError: (error) => errors.push(error) });
      await stores.wakeups.subscribe('work', () => {});
      const channel = `${stores.schema}.work`;
      const client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
      const killed = await client.query(
        "SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE query = 'LISTEN \"' || $1 || '\"'",
        [channel],
      );
      await client.end();
      expect(killed.rows).toEqual([{ ok: true }]);
      const deadline = Date.now() + 10_000;
      const heard: string[] = [];
      await stores.wakeups.subscribe('work', (payload) => heard.push(payload));
      while (heard.length === 0) {
        if (Date.now() > deadline) throw new Error('no notification after reconnecting');
        await rawNotify(channel, 'again');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(heard[0]).toBe('again');
      expect(errors.length).toBeGreaterThan(0);
    });

    it('an append carrying outbox messages (an enqueue) notifies the outbox channel at commit, as outbox.write does', async () => {
      const publisher = await open();
      const node = await open({ schema: publisher.schema });
      const heard = await nextPayload(publisher, WAKEUP_OUTBOX);
      const message = { id: newId(), topic: 'execution.pending', key: 'e-1', payload: '{}', createdAt: 1 };
      await node.events.append({
        executionId: 'e-1',
        workflow: 'wf',
        expectedSeq: 0,
        fence: 0,
        events: [{ envelopeId: newId(), type: 'EXECUTION_STARTED', payload: '{}', recordedAt: 1 }],
        outbox: [message],
      });
      expect(await heard.payload).toBe('');
      const again = await nextPayload(publisher, WAKEUP_OUTBOX);
      await node.outbox.write([{ ...message, id: newId() }]);
      expect(await again.payload).toBe('');
    });

    it('a channel that is not a plain lower-case name is refused', async () => {
      const stores = await open({ schema: freshSchema() });
      for (const channel of ['Timers', 'a.b', '', 'x"; select 1; --']) {
        await expect(stores.wakeups.subscribe(channel, () => {})).rejects.toBeInstanceOf(
          InvalidWakeupChannelError,
        );
        await expect(stores.wakeups.notify(channel)).rejects.toBeInstanceOf(InvalidWakeupChannelError);
      }
    });
  });
});
