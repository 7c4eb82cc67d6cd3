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
import type { OutboxDelivery } from '@skein/workflow-runtime';

/** A message as a consumer receives it. */
export interface TransportMessage {
  messageId: string;
  topic: string;
  key: string;
  payload: string;
  /** Which handling this is: 1 the first time, more after a failed handling. */
  attempt: number;
}

/** What became of one publish: confirmed by the transport, or not (and why). */
export type PublishOutcome = { ok: true } | { ok: false; reason: string };

/** Handles one message; resolving means its work is durable (the message is acknowledged). */
export type MessageHandler = (message: TransportMessage) => Promise<void>;

/** Options of {@link Transport.consume}. */
export interface ConsumeOptions {
  /** Messages handled at once; a broker's prefetch (default: 10). */
  concurrency?: number;
  /** A message whose handler fails this many times is quarantined with the reason (default: 5). */
  maxAttempts?: number;
}

/** A message that kept failing, set aside with the reason. */
export interface QuarantinedMessage {
  messageId: string;
  topic: string;
  key: string;
  payload: string;
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
  publish(deliveries: readonly OutboxDelivery[]): Promise<PublishOutcome[]>;
  /** Run `handler` for every message of `topic`, up to `concurrency` at once. */
  consume(topic: string, handler: MessageHandler, options?: ConsumeOptions): Promise<Subscription>;
  /** Messages of `topic` set aside after failing `maxAttempts` times, at most `limit` (default: 100). */
  quarantined(topic: string, limit?: number): Promise<QuarantinedMessage[]>;
  /** Close every consumer and connection this transport opened. */
  close(): Promise<void>;
}

/** Default of {@link ConsumeOptions.concurrency}. */
export const DEFAULT_CONSUME_CONCURRENCY = 10;
/** Default of {@link ConsumeOptions.maxAttempts}. */
export const DEFAULT_CONSUME_MAX_ATTEMPTS = 5;
