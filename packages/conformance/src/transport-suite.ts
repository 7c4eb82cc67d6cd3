/**
 * `transportSuite`: what every `Transport` does with the messages of an outbox
 * (docs/architecture.md#outbox). Messages are written to the outbox; a transport that relays
 * gets a relay (an `OutboxPublisher`) from `open`; consumers must see every message at least
 * once (O3), not before its `availableAt`, at most `prefetch` at once, and a message that
 * keeps failing ends in quarantine with its reason.
 */
import type { Transport, TransportMessage } from '@skein/worker-runtime';
import type { OutboxStore } from '@skein/workflow-runtime';
import { newId } from '@skein/workflow-runtime/internal';
import type { OutboxMessage } from '@skein/workflow-runtime/spi';
import { describe, expect, it } from 'vitest';
import { withStores } from './harness.js';

/** What `open` gives the suite: an outbox, the transport over it, and its relay, if it needs one. */
export interface TransportUnderTest {
  outbox: OutboxStore;
  transport: Transport;
  /** Start relaying the outbox to the transport (required when `transport.relays`). */
  relay?: () => { stop(): Promise<void> };
  /** Close the transport, the relay's resources and the stores, and remove what the test created. */
  close(): Promise<void>;
}

/** Options of {@link transportSuite}. */
export interface TransportSuiteOptions {
  name: string;
  /** A fresh outbox and transport; the suite's topics are `suite.a` and `suite.b`. */
  open: () => Promise<TransportUnderTest>;
  /** How long to wait for messages to arrive (default: 15 000 ms). */
  timeoutMs?: number;
  /**
   * The `initialMs` of the transport's retry backoff as `open` configures it: a retry must not
   * come back sooner than half of it, the second not sooner than all of it (`retryDelay`).
   */
  retryInitialMs: number;
}

const TOPIC = 'suite.a';
const OTHER = 'suite.b';

function messageOf(topic: string, i: number, availableAt?: number): OutboxMessage {
  const m: OutboxMessage = {
    id: newId(),
    topic,
    key: `k${i}`,
    payload: JSON.stringify({ i }),
    createdAt: Date.now(),
  };
  if (availableAt !== undefined) m.availableAt = availableAt;
  return m;
}

/** Resolves once `done()` holds, checking every 10 ms; rejects after `timeoutMs`. */
async function until(done: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * Register the transport conformance tests in the current vitest file.
 * @example
 * transportSuite({ name: 'store', open: async () => { const stores = openMemoryStores(); … } });
 */
export function transportSuite({
  name,
  open,
  timeoutMs = 15_000,
  retryInitialMs,
}: TransportSuiteOptions): void {
  const run = (body: (t: TransportUnderTest) => Promise<void>) => () =>
    withStores(open, async (t) => {
      if (t.transport.relays && t.relay === undefined)
        throw new Error(`${name}: a relaying transport needs relay`);
      const relay = t.relay?.();
      try {
        await body(t);
      } finally {
        await relay?.stop();
      }
    });
  const testTimeout = timeoutMs * 2;

  describe(`${name}: transport`, () => {
    it(
      'O3: every message written to the outbox reaches a consumer at least once, with its id, topic, key and payload',
      run(async ({ outbox, transport }) => {
        const messages = Array.from({ length: 60 }, (_, i) => messageOf(TOPIC, i));
        const seen = new Map<string, TransportMessage>();
        const consumer = await transport.consume(TOPIC, async (message) => {
          seen.set(message.id, message);
          return 'ack';
        });
        try {
          await outbox.write(messages.slice(0, 30));
          await outbox.write(messages.slice(30));
          await until(() => seen.size === messages.length, timeoutMs, 'every message');
        } finally {
          await consumer.close();
        }
        for (const m of messages)
          expect(seen.get(m.id)).toMatchObject({ id: m.id, topic: TOPIC, key: m.key, payload: m.payload });
        expect(seen.get(messages[0]!.id)?.attempt).toBe(1);
      }),
      testTimeout,
    );

    it(
      'a message is not delivered before its availableAt (delays are the store’s)',
      run(async ({ outbox, transport }) => {
        const at = Date.now() + 800;
        const got: number[] = [];
        const consumer = await transport.consume(TOPIC, async () => {
          got.push(Date.now());
        });
        try {
          await outbox.write([messageOf(TOPIC, 0, at)]);
          await until(() => got.length === 1, timeoutMs, 'the delayed message');
        } finally {
          await consumer.close();
        }
        expect(got[0]!).toBeGreaterThanOrEqual(at);
      }),
      testTimeout,
    );

    it(
      'a consumer gets only its own topic',
      run(async ({ outbox, transport }) => {
        const a: string[] = [];
        const b: string[] = [];
        const ca = await transport.consume(TOPIC, async (m) => void a.push(m.id));
        const cb = await transport.consume(OTHER, async (m) => void b.push(m.id));
        const ma = messageOf(TOPIC, 1);
        const mb = messageOf(OTHER, 2);
        try {
          await outbox.write([ma, mb]);
          await until(() => a.length >= 1 && b.length >= 1, timeoutMs, 'both messages');
        } finally {
          await Promise.all([ca.close(), cb.close()]);
        }
        expect(new Set(a)).toEqual(new Set([ma.id]));
        expect(new Set(b)).toEqual(new Set([mb.id]));
      }),
      testTimeout,
    );

    it(
      'prefetch bounds the handlers in flight',
      run(async ({ outbox, transport }) => {
        let running = 0;
        let most = 0;
        const done = new Set<string>();
        const consumer = await transport.consume(
          TOPIC,
          async (m) => {
            running += 1;
            most = Math.max(most, running);
            await new Promise((resolve) => setTimeout(resolve, 40));
            running -= 1;
            done.add(m.id);
          },
          { prefetch: 3 },
        );
        try {
          await outbox.write(Array.from({ length: 18 }, (_, i) => messageOf(TOPIC, i)));
          await until(() => done.size === 18, timeoutMs, 'every message');
        } finally {
          await consumer.close();
        }
        expect(most).toBeLessThanOrEqual(3);
        expect(most).toBeGreaterThanOrEqual(2);
      }),
      testTimeout,
    );

    it(
      'a handler that keeps failing gets the message again with a higher attempt, after a growing backoff, then it is quarantined with the reason',
      run(async ({ outbox, transport }) => {
        const attempts: number[] = [];
        const times: number[] = [];
        const good = new Set<string>();
        const poison = messageOf(TOPIC, 0);
        const consumer = await transport.consume(
          TOPIC,
          async (m) => {
            if (m.id !== poison.id) return void good.add(m.id);
            attempts.push(m.attempt);
            times.push(Date.now());
            throw new Error(`cannot handle ${m.key}`);
          },
          { maxAttempts: 3 },
        );
        try {
          await outbox.write([poison, messageOf(TOPIC, 1), messageOf(TOPIC, 2)]);
          await until(() => attempts.length >= 3 && good.size === 2, timeoutMs, 'three attempts');
          await until(() => false, 300, 'nothing').catch(() => undefined);
          const set = await transport.quarantined(TOPIC);
          expect(set.map((q) => q.id)).toEqual([poison.id]);
          expect(set[0]!.reason).toContain('cannot handle k0');
          expect(set[0]!.payload).toBe(poison.payload);
        } finally {
          await consumer.close();
        }
        expect(attempts).toEqual([1, 2, 3]);
        // Backoff, not an immediate retry: at least half of each ceiling (initialMs, then 2·initialMs).
        const gaps = [times[1]! - times[0]!, times[2]! - times[1]!];
        expect(gaps[0]).toBeGreaterThanOrEqual(Math.floor(retryInitialMs / 2) - 5);
        expect(gaps[1]).toBeGreaterThanOrEqual(retryInitialMs - 5);
      }),
      testTimeout,
    );

    it(
      'a quarantine verdict sets the message aside at once',
      run(async ({ outbox, transport }) => {
        const m = messageOf(TOPIC, 0);
        let calls = 0;
        const consumer = await transport.consume(TOPIC, async () => {
          calls += 1;
          return 'quarantine';
        });
        try {
          await outbox.write([m]);
          await until(() => calls === 1, timeoutMs, 'the message');
          let set = await transport.quarantined(TOPIC);
          const deadline = Date.now() + timeoutMs;
          while (set.length === 0 && Date.now() < deadline) {
            await new Promise((resolve) => setTimeout(resolve, 20));
            set = await transport.quarantined(TOPIC);
          }
          expect(set.map((q) => q.id)).toEqual([m.id]);
          expect(set[0]!.reason).toContain('quarantine');
        } finally {
          await consumer.close();
        }
        expect(calls).toBe(1);
      }),
      testTimeout,
    );

    it(
      'a closed consumer takes nothing more; the next consumer gets what was written after',
      run(async ({ outbox, transport }) => {
        const first: string[] = [];
        const c1 = await transport.consume(TOPIC, async (m) => void first.push(m.id));
        await c1.close();
        const m = messageOf(TOPIC, 0);
        await outbox.write([m]);
        const second: string[] = [];
        const c2 = await transport.consume(TOPIC, async (x) => void second.push(x.id));
        try {
          await until(() => second.length >= 1, timeoutMs, 'the message');
        } finally {
          await c2.close();
        }
        expect(first).toEqual([]);
        expect(second).toContain(m.id);
      }),
      testTimeout,
    );
  });
}
