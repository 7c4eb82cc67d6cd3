/**
 * A batch's publishes leave in a few socket writes (adr/0089), and every one of them is
 * confirmed and routed: small messages, and messages larger than the socket's buffer.
 */
import { Socket } from 'node:net';
import { Connection } from 'rabbitmq-client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AMQP_URL, connectTransport, deleteTopology, freshPrefix, whenAmqp } from './support/amqp.js';

const TOPIC = 'writes';

/** Count the writes reaching sockets to the broker's port while `fn` runs. */
async function countWrites<T>(fn: () => Promise<T>): Promise<{ writes: number; result: T }> {
  const port = Number(new URL(AMQP_URL).port || 5672);
  const proto = Socket.prototype as unknown as Record<'_write' | '_writev', (...args: unknown[]) => unknown>;
  const original = { _write: proto._write, _writev: proto._writev };
  let writes = 0;
  for (const name of ['_write', '_writev'] as const)
    proto[name] = function (this: Socket, ...args: unknown[]) {
      if (this.remotePort === port) writes += 1;
      return original[name].apply(this, args);
    };
  try {
    const result = await fn();
    return { writes, result };
  } finally {
    proto._write = original._write;
    proto._writev = original._writev;
  }
}

whenAmqp(() => {
  describe('AmqpTransport.publish writes a batch together', () => {
    let prefix: string;
    beforeEach(() => {
      prefix = freshPrefix();
    });
    afterEach(async () => {
      await deleteTopology(prefix, [TOPIC]);
    });

    async function queued(): Promise<number> {
      const connection = new Connection({ url: AMQP_URL });
      try {
        const { messageCount } = await connection.queueDeclare({
          queue: `${prefix}.${TOPIC}`,
          passive: true,
        });
        return messageCount;
      } finally {
        await connection.close();
      }
    }

    it('200 publishes leave in a few socket writes, each confirmed and routed', async () => {
      const transport = await connectTransport(prefix, { topics: [TOPIC] });
      try {
        // The first publish opens the channel (its writes are the channel's set-up, not the batch's).
        await transport.publish([{ id: 'warm', topic: TOPIC, payload: '{}', attempt: 1 }]);
        const messages = Array.from({ length: 200 }, (_, i) => ({
          id: `m${i}`,
          topic: TOPIC,
          key: `k${i}`,
          payload: JSON.stringify({ i }),
          attempt: 1,
        }));
        const { writes, result } = await countWrites(() => transport.publish(messages));
        expect(result.map((o) => o.status)).toEqual(messages.map(() => 'confirmed'));
        expect(writes).toBeLessThanOrEqual(20);
      } finally {
        await transport.close();
      }
      expect(await queued()).toBe(201);
    });

    it('messages larger than the socket buffer are all confirmed and routed', async () => {
      const transport = await connectTransport(prefix, { topics: [TOPIC] });
      try {
        const payload = JSON.stringify({ blob: 'x'.repeat(40_000) });
        const messages = Array.from({ length: 30 }, (_, i) => ({
          id: `b${i}`,
          topic: TOPIC,
          payload,
          attempt: 1,
        }));
        const outcomes = await transport.publish(messages);
        expect(outcomes.map((o) => o.status)).toEqual(messages.map(() => 'confirmed'));
      } finally {
        await transport.close();
      }
      expect(await queued()).toBe(30);
    });
  });
});
