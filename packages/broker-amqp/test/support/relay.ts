/**
 * A relay under test: a SQLite outbox on a real file, a transport with its own prefix and
 * connection name, a publisher, a consumer that records every id it saw, and the checks every
 * failure test makes (O2, O3: every committed message delivered at least once, none marked
 * published without a confirm, nothing uncommitted published).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AmqpTransport } from '@skein/broker-amqp';
import { openSqliteStores, type SqliteStores } from '@skein/store-sqlite';
import type { Subscription } from '@skein/worker-runtime';
import { OutboxPublisher } from '@skein/worker-runtime-local';
import { StaleFenceError } from '@skein/workflow-runtime';
import { newId } from '@skein/workflow-runtime/internal';
import type { OutboxMessage } from '@skein/workflow-runtime/spi';
import { expect } from 'vitest';
import { connectTransport, deleteTopology, freshPrefix } from './amqp.js';

export const TOPIC = 'load';

/** What a failure test arranges. */
export interface Relay {
  prefix: string;
  path: string;
  stores: SqliteStores;
  transport: AmqpTransport;
  /** Every id the consumer was handed, with how many times. */
  seen: Map<string, number>;
  /** Ids committed to the outbox. */
  committed: Set<string>;
  /** Ids of messages whose append was refused (never committed). */
  uncommitted: Set<string>;
  publisher(options?: { batchSize?: number; leaseMs?: number }): OutboxPublisher;
  consume(prefetch?: number): Promise<Subscription>;
  /** Commit `n` messages, each with seq 0 of its own execution; and one refused append's message. */
  commit(n: number): Promise<void>;
  /** Wait until the consumer saw every committed message and the outbox marked each published. */
  settled(timeoutMs: number): Promise<void>;
  /** The O2/O3 checks. */
  check(): Promise<void>;
  close(): Promise<void>;
}

let executions = 0;

/** Arrange a relay; `close()` removes the file and the broker topology. */
export async function openRelay(): Promise<Relay> {
  const prefix = freshPrefix();
  const dir = mkdtempSync(join(tmpdir(), 'skein-amqp-relay-'));
  const path = join(dir, 'skein.db');
  const stores = openSqliteStores({ path });
  const transport = await connectTransport(prefix, { topics: [TOPIC] });
  const seen = new Map<string, number>();
  const committed = new Set<string>();
  const uncommitted = new Set<string>();
  const publishers: OutboxPublisher[] = [];
  const consumers: Subscription[] = [];
  const message = (key: string): OutboxMessage => ({
    id: newId(),
    topic: TOPIC,
    key,
    payload: JSON.stringify({ key }),
    createdAt: Date.now(),
  });
  const relay: Relay = {
    prefix,
    path,
    stores,
    transport,
    seen,
    committed,
    uncommitted,
    publisher(options = {}) {
      const publisher = new OutboxPublisher({
        stores,
        transport,
        pollIntervalMs: 20,
        retry: { initialMs: 50, maxMs: 500 },
        onError: () => undefined,
        ...options,
      });
      publisher.start();
      publishers.push(publisher);
      return publisher;
    },
    async consume(prefetch = 20) {
      const consumer = await transport.consume(
        TOPIC,
        async (m) => {
          seen.set(m.id, (seen.get(m.id) ?? 0) + 1);
        },
        { prefetch },
      );
      consumers.push(consumer);
      return consumer;
    },
    async commit(n) {
      const appends = Array.from({ length: n }, () => {
        executions += 1;
        const executionId = `x-${process.pid}-${executions}`;
        const m = message(executionId);
        committed.add(m.id);
        return stores.events.append({
          executionId,
          workflow: 'wf',
          expectedSeq: 0,
          fence: 0,
          events: [{ envelopeId: newId(), type: 'EXECUTION_STARTED', payload: '{}', recordedAt: Date.now() }],
          outbox: [m],
        });
      });
      await Promise.all(appends);
      // An append refused for a stale fence: its message must never be published.
      executions += 1;
      const executionId = `x-${process.pid}-${executions}`;
      await stores.events.acquireFence(executionId);
      await stores.events.acquireFence(executionId);
      const lost = message(executionId);
      uncommitted.add(lost.id);
      const refused = stores.events.append({
        executionId,
        workflow: 'wf',
        expectedSeq: 0,
        fence: 1,
        events: [{ envelopeId: newId(), type: 'EXECUTION_STARTED', payload: '{}', recordedAt: Date.now() }],
        outbox: [lost],
      });
      await expect(refused).rejects.toBeInstanceOf(StaleFenceError);
    },
    async settled(timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const pending = (await stores.outbox.list({ status: 'pending', limit: 1 })).length;
        const missing = [...committed].filter((id) => !seen.has(id)).length;
        if (pending === 0 && missing === 0) return;
        if (Date.now() > deadline)
          throw new Error(`after ${timeoutMs} ms: ${pending} deliveries pending, ${missing} messages unseen`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    async check() {
      const all = await stores.outbox.list({ limit: 100_000 });
      // Nothing committed lost: every committed message is in the outbox and was delivered.
      expect(all.map((d) => d.id).sort()).toEqual([...committed].sort());
      for (const id of committed) expect(seen.get(id) ?? 0).toBeGreaterThanOrEqual(1);
      // No delivery marked published without a confirm: each published one reached the queue.
      for (const d of all) if (d.status === 'published') expect(seen.has(d.id)).toBe(true);
      // Nothing uncommitted published.
      for (const id of uncommitted) expect(seen.has(id)).toBe(false);
    },
    async close() {
      await Promise.allSettled(publishers.map((p) => p.stop()));
      await Promise.allSettled(consumers.map((c) => c.close()));
      await transport.close();
      await stores.close();
      rmSync(dir, { recursive: true, force: true });
      await deleteTopology(prefix, [TOPIC]);
    },
  };
  return relay;
}
