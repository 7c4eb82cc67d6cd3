/**
 * The `Transport` SPI (docs/outbox.md): how outbox messages travel from the store that wrote
 * them to the consumers that act on them. `StoreTransport` (`@skein/worker-runtime-local`)
 * lets consumers read the outbox directly; `AmqpTransport` (`@skein/broker-amqp`) carries
 * them through RabbitMQ, relayed by an `OutboxPublisher`. Both pass `transportSuite`.
 *
 * Delivery is at least once: a consumer may see a message again (after a crash before its
 * ack, a lost ack, a retry), so handlers are idempotent, and messages carry `messageId` and
 * `key` to tell.
 */

import type { OutboxDelivery } from '@skein/workflow-runtime/spi';

/** A message on a transport: what a publisher sends and a consumer receives. */
export interface TransportMessage {
  /** The outbox message id (a ULID): the dedupe key. */
  id: string;
  topic: string;
  /** What it concerns (an execution id, say) (default: none). */
  key?: string;
  /** The message's text (JSON for Skein's own messages). */
  payload: string;
  /** Extra string headers carried along (default: none). */
  headers?: Readonly<Record<string, string>>;
  /** Which handling this is: 1 the first time, more after a failed handling (or a claim that lapsed). */
  attempt: number;
}

/**
 * What became of one publish: `confirmed` once the transport holds it durably (O2);
 * `returned` (no queue takes its topic), `nacked` (the transport refused it) or `failed` (no
 * answer, a lost connection) leave the delivery pending, with `reason`.
 */
export type PublishOutcome =
  | { status: 'confirmed' }
  | { status: 'returned' | 'nacked' | 'failed'; reason: string };

/**
 * What a handler decides: `ack` (its work is durable), `retry` (handle it again, until
 * `maxAttempts`), `quarantine` (set it aside now). Resolving with nothing is `ack`; throwing
 * is `retry` with the error as the reason.
 */
export type HandlerVerdict = 'ack' | 'retry' | 'quarantine';

/** Handles one message; see {@link HandlerVerdict}. */
// biome-ignore lint/suspicious/noConfusingVoidType: a handler written `async (m) => { … }` returns Promise<void>, which means ack.
export type MessageHandler = (message: TransportMessage) => Promise<HandlerVerdict | undefined | void>;

/** Options of {@link Transport.consume}. */
export interface ConsumeOptions {
  /** Messages handled at once, and a broker's prefetch: the consumer's in-flight limit (default: 10). */
  prefetch?: number;
  /** A message whose handler fails this many times is quarantined with the reason (default: 5). */
  maxAttempts?: number;
}

/** A message that kept failing, set aside with the reason. */
export interface QuarantinedMessage {
  id: string;
  topic: string;
  key?: string;
  payload: string;
  /** Why it was set aside: the last error, or the handler's verdict. */
  reason: string;
}

/** A running consumer. */
export interface Subscription {
  /** Stop taking messages and wait for the handlers in flight. */
  close(): Promise<void>;
}

/** Carries outbox messages to consumers; see the module comment. */
export interface Transport {
  /**
   * Whether messages need an `OutboxPublisher` to relay them from the outbox (a broker), or
   * consumers read the outbox themselves (`false`, `StoreTransport`).
   */
  readonly relays: boolean;
  /**
   * Publish claimed deliveries; one outcome per delivery, in order. `ok` only once the
   * transport confirmed the message durable (O2); a returned or refused one is not ok.
   */
  publish(messages: readonly TransportMessage[]): Promise<PublishOutcome[]>;
  /** Run `handler` for every message of `topic`, up to `prefetch` at once. */
  consume(topic: string, handler: MessageHandler, options?: ConsumeOptions): Promise<Subscription>;
  /** Messages of `topic` set aside after failing `maxAttempts` times, at most `limit` (default: 100). */
  quarantined(topic: string, limit?: number): Promise<QuarantinedMessage[]>;
  /** Close every consumer and connection this transport opened. */
  close(): Promise<void>;
}

/** Default of {@link ConsumeOptions.prefetch}. */
export const DEFAULT_PREFETCH = 10;
/** Default of {@link ConsumeOptions.maxAttempts}. */
export const DEFAULT_CONSUME_MAX_ATTEMPTS = 5;

/**
 * The transport message of a claimed outbox delivery; its attempt is the delivery's claim
 * count, and it carries the message's headers (the enqueuer's trace context, say).
 */
export function messageOf(delivery: OutboxDelivery): TransportMessage {
  const message: TransportMessage = {
    id: delivery.id,
    topic: delivery.topic,
    payload: delivery.payload,
    attempt: Math.max(1, delivery.attempts),
  };
  if (delivery.key !== '') message.key = delivery.key;
  if (delivery.headers !== undefined) message.headers = delivery.headers;
  return message;
}

/** What a handling came to: the verdict, and the reason when it is not `ack`. */
export interface Handled {
  verdict: HandlerVerdict;
  reason: string;
}

/** Run `handler` on `message` and say what it decided (a throw is `retry`, its message the reason). */
export async function handle(handler: MessageHandler, message: TransportMessage): Promise<Handled> {
  try {
    const verdict = (await handler(message)) ?? 'ack';
    if (verdict !== 'ack' && verdict !== 'retry' && verdict !== 'quarantine')
      return {
        verdict: 'retry',
        reason: `the handler answered ${String(verdict)}, not ack, retry or quarantine`,
      };
    return { verdict, reason: verdict === 'ack' ? '' : `the handler answered ${verdict}` };
  } catch (error) {
    return {
      verdict: 'retry',
      reason: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
    };
  }
}
