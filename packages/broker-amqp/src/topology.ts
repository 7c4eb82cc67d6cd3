/**
 * The broker topology of one prefix (docs/rabbitmq.md): a durable direct exchange `<prefix>`
 * that routes each message by its topic to a durable quorum queue `<prefix>.<topic>`, and a
 * durable fanout exchange `<prefix>.quarantine` with its queue `<prefix>.quarantine` for
 * messages that kept failing. A topic without a queue is unroutable: a mandatory publish to
 * it comes back, and the delivery stays pending.
 *
 * A handler's retry waits in a retry queue (adr/0061): a durable headers exchange
 * `<prefix>.retry` routes by the `skein-retry-delay` header to `<prefix>.retry.<ms>`, one quorum
 * queue per backoff ceiling, whose message TTL is that ceiling and whose dead-letter
 * exchange is `<prefix>`. A message waits there (its own `expiration`, the jittered delay,
 * or the ceiling, whichever is first) and is dead-lettered, at least once, back to its
 * topic's queue under its original routing key.
 */

import { backoffCeiling, type RetryBackoff } from '@skein/worker-runtime';

/** Queue arguments of every queue: quorum queues (replicated, durable, at-least-once). */
export const QUEUE_ARGUMENTS = { 'x-queue-type': 'quorum' } as const;

/** Names of one prefix's exchanges and queues. */
export interface Topology {
  exchange: string;
  quarantineExchange: string;
  quarantineQueue: string;
  queueOf(topic: string): string;
  retryExchange: string;
  /** The retry queue of one backoff ceiling. */
  retryQueueOf(ceilingMs: number): string;
}

/** The topology named by `prefix`. */
export function topologyOf(prefix: string): Topology {
  return {
    exchange: prefix,
    quarantineExchange: `${prefix}.quarantine`,
    quarantineQueue: `${prefix}.quarantine`,
    queueOf: (topic) => `${prefix}.${topic}`,
    retryExchange: `${prefix}.retry`,
    retryQueueOf: (ceilingMs) => `${prefix}.retry.${ceilingMs}`,
  };
}

/** The distinct backoff ceilings of `backoff` (`initialMs` doubling, then `maxMs`): one retry queue each. */
export function retryCeilings(backoff: RetryBackoff): number[] {
  const ceilings: number[] = [];
  for (let attempt = 1; ; attempt += 1) {
    const ceiling = backoffCeiling(attempt, backoff);
    if (ceilings.at(-1) === ceiling) return ceilings;
    ceilings.push(ceiling);
  }
}

/** The arguments of the retry queue of `ceilingMs`: wait at most that long, then back to `<prefix>`. */
function retryQueueArguments(t: Topology, ceilingMs: number) {
  return {
    ...QUEUE_ARGUMENTS,
    'x-message-ttl': ceilingMs,
    'x-dead-letter-exchange': t.exchange,
    'x-dead-letter-strategy': 'at-least-once',
    'x-overflow': 'reject-publish',
  };
}

/** The declarations rabbitmq-client re-runs on every (re)connection, for `topics` and the retry `ceilings`. */
export function declarations(t: Topology, topics: readonly string[], ceilings: readonly number[]) {
  return {
    exchanges: [
      { exchange: t.exchange, type: 'direct', durable: true },
      { exchange: t.quarantineExchange, type: 'fanout', durable: true },
      { exchange: t.retryExchange, type: 'headers', durable: true },
    ],
    queues: [
      ...topics.map((topic) => ({
        queue: t.queueOf(topic),
        durable: true,
        arguments: { ...QUEUE_ARGUMENTS },
      })),
      { queue: t.quarantineQueue, durable: true, arguments: { ...QUEUE_ARGUMENTS } },
      ...ceilings.map((ms) => ({
        queue: t.retryQueueOf(ms),
        durable: true,
        arguments: retryQueueArguments(t, ms),
      })),
    ],
    queueBindings: [
      ...topics.map((topic) => ({ queue: t.queueOf(topic), exchange: t.exchange, routingKey: topic })),
      { queue: t.quarantineQueue, exchange: t.quarantineExchange, routingKey: '' },
      ...ceilings.map((ms) => ({
        queue: t.retryQueueOf(ms),
        exchange: t.retryExchange,
        routingKey: '',
        arguments: { 'x-match': 'all', [HEADERS.delay]: String(ms) },
      })),
    ],
  };
}

/** Header names Skein sets on every message. */
export const HEADERS = {
  attempt: 'x-skein-attempt',
  key: 'x-skein-key',
  topic: 'x-skein-topic',
  reason: 'x-skein-reason',
  /**
   * The backoff ceiling (ms, as text) whose retry queue a retried message waits in. Without
   * the `x-` prefix: a headers exchange does not match on `x-` headers.
   */
  delay: 'skein-retry-delay',
} as const;
