/**
 * The broker topology of one prefix (docs/rabbitmq.md): a durable direct exchange `<prefix>`
 * that routes each message by its topic to a durable quorum queue `<prefix>.<topic>`, and a
 * durable fanout exchange `<prefix>.quarantine` with its queue `<prefix>.quarantine` for
 * messages that kept failing. A topic without a queue is unroutable: a mandatory publish to
 * it comes back, and the delivery stays pending.
 */

/** Queue arguments of every queue: quorum queues (replicated, durable, at-least-once). */
export const QUEUE_ARGUMENTS = { 'x-queue-type': 'quorum' } as const;

/** Names of one prefix's exchanges and queues. */
export interface Topology {
  exchange: string;
  quarantineExchange: string;
  quarantineQueue: string;
  queueOf(topic: string): string;
}

/** The topology named by `prefix`. */
export function topologyOf(prefix: string): Topology {
  return {
    exchange: prefix,
    quarantineExchange: `${prefix}.quarantine`,
    quarantineQueue: `${prefix}.quarantine`,
    queueOf: (topic) => `${prefix}.${topic}`,
  };
}

/** The declarations rabbitmq-client re-runs on every (re)connection, for `topics`. */
export function declarations(t: Topology, topics: readonly string[]) {
  return {
    exchanges: [
      { exchange: t.exchange, type: 'direct', durable: true },
      { exchange: t.quarantineExchange, type: 'fanout', durable: true },
    ],
    queues: [
      ...topics.map((topic) => ({
        queue: t.queueOf(topic),
        durable: true,
        arguments: { ...QUEUE_ARGUMENTS },
      })),
      { queue: t.quarantineQueue, durable: true, arguments: { ...QUEUE_ARGUMENTS } },
    ],
    queueBindings: [
      ...topics.map((topic) => ({ queue: t.queueOf(topic), exchange: t.exchange, routingKey: topic })),
      { queue: t.quarantineQueue, exchange: t.quarantineExchange, routingKey: '' },
    ],
  };
}

/** Header names Skein sets on every message. */
export const HEADERS = {
  attempt: 'x-skein-attempt',
  key: 'x-skein-key',
  topic: 'x-skein-topic',
  reason: 'x-skein-reason',
} as const;
