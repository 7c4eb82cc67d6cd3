/**
 * `AmqpTransport`: outbox messages through RabbitMQ on `rabbitmq-client` (docs/rabbitmq.md,
 * adr/0035). Durable exchanges and quorum queues, persistent messages, `mandatory` routing,
 * publisher confirms. The client reconnects with bounded backoff and re-declares the topology
 * and re-subscribes consumers on every new connection; a publish that meets a lost
 * connection or channel is retried once on a fresh channel before it reports `failed`.
 * Consumers prefetch exactly their in-flight limit and ack only after the handler resolved.
 * A failed handling waits out a jittered backoff in a retry queue before it comes back
 * (topology.ts, adr/0061). Consumer creation and quarantine publishing pass one broker circuit.
 */
import {
  backoffCeiling,
  backoffIssues,
  type ConsumeOptions,
  DEFAULT_CONSUME_MAX_ATTEMPTS,
  DEFAULT_PREFETCH,
  handle,
  type MessageHandler,
  type PublishOutcome,
  type QuarantinedMessage,
  type RetryBackoff,
  retryDelay,
  type Subscription,
  type Transport,
  type TransportMessage,
} from '@skein/worker-runtime';
import { InvalidInputError } from '@skein/workflow-runtime';
import {
  type AsyncMessage,
  Connection,
  type Consumer,
  ConsumerStatus,
  type Publisher,
} from 'rabbitmq-client';
import { BrokerCircuit, type BrokerCircuitOptions } from './circuit.js';
import { corked } from './corked.js';
import { AmqpTransportClosedError, BrokerUnavailableError } from './errors.js';
import {
  declarations,
  HEADERS,
  QUEUE_ARGUMENTS,
  retryCeilings,
  type Topology,
  topologyOf,
} from './topology.js';

/** Options of {@link AmqpTransport.connect}. */
export interface AmqpTransportOptions {
  /** The broker (default: `SKEIN_AMQP_URL`, else `amqp://guest:guest@127.0.0.1:5672`). */
  url?: string;
  /** Names every exchange and queue (`<prefix>`, `<prefix>.<topic>`, `<prefix>.quarantine`): letters, digits, `.`, `_`, `-`. */
  prefix: string;
  /** Topics whose queues are declared up front, so their messages are routable before a consumer exists (default: `['execution.pending']`). */
  topics?: readonly string[];
  /** The client-provided connection name the broker shows (default: `skein:<prefix>:<pid>`). */
  connectionName?: string;
  /** How long `connect` and consumer creation wait for the broker (default: 10 000 ms). */
  connectTimeoutMs?: number;
  /** Reconnection backoff: step and cap in ms (default: 200 and 5 000). */
  reconnect?: { stepMs?: number; maxMs?: number };
  /**
   * Backoff of a failed handling before the message comes back: a delay drawn from the upper
   * half of `min(maxMs, initialMs * 2^(attempt-1))`, waited out in the retry queue of that
   * ceiling (default: 200 and 30 000; one retry queue per distinct ceiling).
   */
  retry?: { initialMs?: number; maxMs?: number };
  /** The broker circuit of consumer creation and quarantine publishing (default: see `BrokerCircuit`). */
  circuit?: BrokerCircuitOptions;
  /** Where background errors (a consumer's channel, a quarantine that failed) go (default: `console.error`). */
  onError?: (error: unknown, context: string) => void;
}

const PREFIX = /^[A-Za-z0-9][A-Za-z0-9._-]{0,100}$/;

/**
 * The RabbitMQ transport; see the module comment.
 * @example
 * const transport = await AmqpTransport.connect({ url: 'amqp://guest:guest@127.0.0.1:5672', prefix: 'skein' });
 * const publisher = new OutboxPublisher({ stores, transport, batchSize: 200 });
 * publisher.start();
 * const consumer = await transport.consume('execution.pending', async (message) => 'ack', { prefetch: 4 });
 */
export class AmqpTransport implements Transport {
  readonly relays = true;
  /** The names of this transport's exchanges and queues. */
  readonly topology: Topology;
  private readonly publisher: Publisher;
  /** Ids of messages the broker returned as unroutable, with its reason, until their send settles. */
  private readonly returned = new Map<string, string>();
  private readonly consumers = new Set<Consumer>();
  private readonly circuit: BrokerCircuit;
  private readonly onError: (error: unknown, context: string) => void;
  private readonly backoff: RetryBackoff;
  private readonly ceilings: number[];
  private closed = false;

  private constructor(
    private readonly connection: Connection,
    private readonly options: Required<Pick<AmqpTransportOptions, 'prefix' | 'connectTimeoutMs'>> &
      AmqpTransportOptions & { backoff: RetryBackoff },
  ) {
    this.topology = topologyOf(options.prefix);
    this.backoff = options.backoff;
    this.ceilings = retryCeilings(this.backoff);
    this.circuit = new BrokerCircuit(options.circuit);
    this.onError = options.onError ?? ((error, context) => console.error(`skein: ${context}:`, error));
    this.publisher = connection.createPublisher({
      confirm: true,
      // Once more on a fresh channel after a lost connection or channel, then `failed`.
      maxAttempts: 2,
      ...declarations(this.topology, options.topics ?? ['execution.pending'], this.ceilings),
    });
    this.publisher.on('basic.return', (message) => {
      if (message.messageId !== undefined)
        this.returned.set(message.messageId, `${message.replyCode} ${message.replyText}`);
    });
  }

  /**
   * Connect, declare the topology, and return the transport. Rejects with
   * `BrokerUnavailableError` when the broker does not answer within `connectTimeoutMs`.
   */
  static async connect(options: AmqpTransportOptions): Promise<AmqpTransport> {
    const resolved = resolve(options);
    const connection = new Connection({
      url: resolved.url,
      connectionName: resolved.connectionName,
      // Frames leave at once: with Nagle's algorithm a lone small frame (a publish, an ack)
      // waits for the peer's delayed ACK, ~40 ms on Linux.
      noDelay: true,
      retryLow: resolved.reconnect?.stepMs ?? 200,
      retryHigh: resolved.reconnect?.maxMs ?? 5_000,
      acquireTimeout: resolved.connectTimeoutMs,
      connectionTimeout: resolved.connectTimeoutMs,
    });
    connection.on('error', (error) => resolved.onError?.(error, 'AmqpTransport: connection'));
    try {
      await connection.onConnect(resolved.connectTimeoutMs, true);
      const transport = new AmqpTransport(connection, resolved);
      await transport.declare();
      return transport;
    } catch (error) {
      await connection.close().catch(() => undefined);
      throw new BrokerUnavailableError(`connect to ${redact(resolved.url!)}`, resolved.connectTimeoutMs, {
        cause: error,
      });
    }
  }

  /**
   * Delete a prefix's exchanges and queues, with every message in them: the queues of
   * `topics` (default: `['execution.pending']`; name every topic consumed under the prefix),
   * the quarantine, and the retry queues of `retry`'s backoff. For tearing down a prefix
   * nothing uses any more (a test's, a bench's); a transport still connected to it would
   * re-declare its topology on its next reconnection. Deleting what is not there is not an
   * error. Options are checked as `connect` checks them.
   * @example
   * await transport.close();
   * await AmqpTransport.deleteTopology({ prefix: 'skein-job-42', topics: ['execution.pending', 'fanout.chunk.main'] });
   */
  static async deleteTopology(options: AmqpTransportOptions): Promise<void> {
    const resolved = resolve(options);
    const t = topologyOf(resolved.prefix);
    const d = declarations(t, resolved.topics ?? ['execution.pending'], retryCeilings(resolved.backoff));
    const connection = new Connection({
      url: resolved.url,
      connectionName: resolved.connectionName,
      acquireTimeout: resolved.connectTimeoutMs,
      connectionTimeout: resolved.connectTimeoutMs,
    });
    connection.on('error', (error) => resolved.onError?.(error, 'AmqpTransport.deleteTopology: connection'));
    try {
      await connection.onConnect(resolved.connectTimeoutMs, true).catch((error: unknown) => {
        throw new BrokerUnavailableError(`connect to ${redact(resolved.url)}`, resolved.connectTimeoutMs, {
          cause: error,
        });
      });
      for (const { queue } of d.queues) await connection.queueDelete({ queue });
      for (const { exchange } of d.exchanges) await connection.exchangeDelete({ exchange });
    } finally {
      await connection.close();
    }
  }

  /**
   * Publish each message persistent and mandatory, and say what the broker answered (O2). All
   * of them go out at once, their frames in a few socket writes (`corked`); once every confirm
   * (or failure) is in, one turn of the event loop lets the broker's returns arrive (see
   * `returnedReason`) before the outcomes are read.
   */
  async publish(messages: readonly TransportMessage[]): Promise<PublishOutcome[]> {
    if (this.closed) throw new AmqpTransportClosedError('publish');
    const sent = await Promise.all(
      corked(this.connection, messages, (message) =>
        this.send(this.topology.exchange, message.topic, message, {}).then(
          () => undefined,
          (error: unknown) => error,
        ),
      ),
    );
    await new Promise((resolve) => setImmediate(resolve));
    return messages.map((message, i) => this.outcomeOf(message, sent[i]));
  }

  async consume(topic: string, handler: MessageHandler, options: ConsumeOptions = {}): Promise<Subscription> {
    if (this.closed) throw new AmqpTransportClosedError('consume');
    const prefetch = options.prefetch ?? DEFAULT_PREFETCH;
    const maxAttempts = options.maxAttempts ?? DEFAULT_CONSUME_MAX_ATTEMPTS;
    checkConsume(topic, prefetch, maxAttempts);
    const consumer = await this.circuit.run(`consume "${topic}"`, () =>
      this.createConsumer(topic, prefetch, (message) => this.deliver(topic, message, handler, maxAttempts)),
    );
    this.consumers.add(consumer);
    return {
      close: async () => {
        this.consumers.delete(consumer);
        await consumer.close();
      },
    };
  }

  /** Reads the quarantine queue without taking anything off it (what it reads is requeued). */
  async quarantined(topic: string, limit = 100): Promise<QuarantinedMessage[]> {
    const channel = await this.connection.acquire();
    const found: QuarantinedMessage[] = [];
    try {
      for (;;) {
        const message = await channel.basicGet({ queue: this.topology.quarantineQueue });
        if (message === undefined) break;
        const headers = message.headers ?? {};
        if (headers[HEADERS.topic] !== topic) continue;
        const q: QuarantinedMessage = {
          id: String(message.messageId),
          topic,
          payload: textOf(message.body),
          reason: String(headers[HEADERS.reason] ?? ''),
        };
        if (headers[HEADERS.key]) q.key = String(headers[HEADERS.key]);
        found.push(q);
        if (found.length >= limit) break;
      }
    } finally {
      // Unacknowledged, every message read goes back to the queue when the channel closes.
      await channel.close();
    }
    return found;
  }

  /** Close every consumer (their unacked messages go back to the queue), the publisher and the connection. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.allSettled([...this.consumers].map((consumer) => consumer.close()));
    this.consumers.clear();
    await this.publisher.close();
    await this.connection.close();
  }

  /** Declare the exchanges, queues and bindings once now (the clients re-declare on reconnect). */
  private async declare(): Promise<void> {
    const d = declarations(this.topology, this.options.topics ?? ['execution.pending'], this.ceilings);
    const channel = await this.connection.acquire();
    try {
      for (const exchange of d.exchanges) await channel.exchangeDeclare(exchange);
      for (const queue of d.queues) await channel.queueDeclare(queue);
      for (const binding of d.queueBindings) await channel.queueBind(binding);
    } finally {
      await channel.close();
    }
  }

  /** What became of one publish of a batch: `error` is what its send rejected with, if it did. */
  private outcomeOf(message: TransportMessage, error: unknown): PublishOutcome {
    const returned = this.returned.get(message.id);
    this.returned.delete(message.id);
    if (error !== undefined) {
      const code = (error as { code?: string }).code;
      const reason = error instanceof Error ? error.message : String(error);
      return { status: code === 'NACK' ? 'nacked' : 'failed', reason };
    }
    if (returned === undefined) return { status: 'confirmed' };
    return { status: 'returned', reason: `no queue takes topic "${message.topic}" (${returned})` };
  }

  /**
   * Why the broker returned the confirmed publish of `id`, if it did. The broker sends
   * basic.return before the confirm on the same channel; the client emits it on the next
   * turn of the event loop, so look once that turn has passed.
   */
  private async returnedReason(id: string): Promise<string | undefined> {
    await new Promise((resolve) => setImmediate(resolve));
    const returned = this.returned.get(id);
    this.returned.delete(id);
    return returned;
  }

  /**
   * Put a failed message in the retry queue of its backoff ceiling, with the next attempt
   * number and its jittered delay as `expiration`; the queue dead-letters it back to the
   * topic's queue when that passes. Rejects when the broker did not take it.
   */
  private async sendToRetry(topic: string, message: TransportMessage): Promise<void> {
    const ceiling = backoffCeiling(message.attempt, this.backoff);
    const delay = retryDelay(message.attempt, this.backoff);
    const next = { ...message, attempt: message.attempt + 1 };
    await this.send(this.topology.retryExchange, topic, next, { [HEADERS.delay]: String(ceiling) }, delay);
    const returned = await this.returnedReason(message.id);
    if (returned !== undefined)
      throw new Error(`the retry queue of ${ceiling} ms took nothing (${returned})`);
  }

  /** Publish persistent and mandatory with Skein's headers; resolves on the broker's confirm. */
  private send(
    exchange: string,
    routingKey: string,
    message: TransportMessage,
    extra: Record<string, string | number>,
    expirationMs?: number,
  ): Promise<void> {
    return this.publisher.send(
      {
        exchange,
        routingKey,
        mandatory: true,
        durable: true,
        messageId: message.id,
        ...(expirationMs === undefined ? {} : { expiration: String(expirationMs) }),
        headers: {
          ...message.headers,
          [HEADERS.attempt]: message.attempt,
          [HEADERS.key]: message.key ?? '',
          [HEADERS.topic]: message.topic,
          ...extra,
        },
      },
      message.payload,
    );
  }

  /** A consumer on the topic's queue whose prefetch is its in-flight limit; resolves once it is ready. */
  private createConsumer(
    topic: string,
    prefetch: number,
    onMessage: (message: AsyncMessage) => Promise<ConsumerStatus>,
  ): Promise<Consumer> {
    const queue = this.topology.queueOf(topic);
    const d = declarations(this.topology, [topic], []);
    return new Promise<Consumer>((resolvePromise, reject) => {
      const consumer = this.connection.createConsumer(
        {
          queue,
          queueOptions: { durable: true, arguments: { ...QUEUE_ARGUMENTS } },
          qos: { prefetchCount: prefetch },
          concurrency: prefetch,
          requeue: true,
          exchanges: d.exchanges,
          queueBindings: d.queueBindings.filter((binding) => binding.queue === queue),
        },
        onMessage,
      );
      const timer = setTimeout(() => {
        consumer.close().catch(() => undefined);
        reject(new BrokerUnavailableError(`consume "${topic}"`, this.options.connectTimeoutMs));
      }, this.options.connectTimeoutMs);
      consumer.once('ready', () => {
        clearTimeout(timer);
        resolvePromise(consumer);
      });
      consumer.on('error', (error) => this.onError(error, `AmqpTransport: consumer of "${topic}"`));
    });
  }

  /**
   * Handle one delivery: ack after the handler resolved; a failed attempt goes to the retry
   * queue of its backoff with the next attempt number (then acked); past `maxAttempts`, or on a `quarantine`
   * verdict, it goes to the quarantine queue with the reason. When that publish fails, the
   * message is requeued (after the circuit's backoff), never dropped.
   */
  private async deliver(
    topic: string,
    raw: AsyncMessage,
    handler: MessageHandler,
    maxAttempts: number,
  ): Promise<ConsumerStatus> {
    const message = messageFrom(topic, raw);
    const { verdict, reason } = await handle(handler, message);
    if (verdict === 'ack') return ConsumerStatus.ACK;
    if (verdict === 'retry' && message.attempt < maxAttempts) {
      try {
        await this.sendToRetry(topic, message);
        return ConsumerStatus.ACK;
      } catch (error) {
        this.onError(error, `AmqpTransport: retry of message "${message.id}" (requeued)`);
        return ConsumerStatus.REQUEUE;
      }
    }
    try {
      await this.circuit.run(`quarantine message "${message.id}"`, () =>
        this.send(this.topology.quarantineExchange, '', message, { [HEADERS.reason]: reason }),
      );
      return ConsumerStatus.ACK;
    } catch (error) {
      this.onError(error, `AmqpTransport: quarantine of message "${message.id}" (requeued)`);
      await this.circuit.ready();
      return ConsumerStatus.REQUEUE;
    }
  }
}

/** Headers that are Skein's or the broker's dead-lettering record, not the message's own. */
const BROKER_HEADER = /^(x-skein-|x-death$|x-first-death-|x-last-death-|skein-retry-delay$)/;

/** The transport message of a broker delivery. */
function messageFrom(topic: string, raw: AsyncMessage): TransportMessage {
  const headers = raw.headers ?? {};
  const message: TransportMessage = {
    id: String(raw.messageId ?? ''),
    topic,
    payload: textOf(raw.body),
    attempt: Math.max(1, Number(headers[HEADERS.attempt] ?? 1) || 1),
  };
  const key = headers[HEADERS.key];
  if (typeof key === 'string' && key !== '') message.key = key;
  const rest: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers))
    if (!BROKER_HEADER.test(name) && typeof value === 'string') rest[name] = value;
  if (Object.keys(rest).length > 0) message.headers = rest;
  return message;
}

function textOf(body: unknown): string {
  if (typeof body === 'string') return body;
  if (Buffer.isBuffer(body)) return body.toString('utf8');
  return JSON.stringify(body);
}

function resolve(options: AmqpTransportOptions) {
  const issues: { path: string; message: string }[] = [];
  if (typeof options?.prefix !== 'string' || !PREFIX.test(options.prefix))
    issues.push({ path: 'prefix', message: `must match ${PREFIX.source}, got ${String(options?.prefix)}` });
  const timeout = options?.connectTimeoutMs ?? 10_000;
  if (!(timeout > 0)) issues.push({ path: 'connectTimeoutMs', message: `must be > 0, got ${timeout}` });
  const backoff = { initialMs: options?.retry?.initialMs ?? 200, maxMs: options?.retry?.maxMs ?? 30_000 };
  issues.push(...backoffIssues('retry', backoff));
  for (const [i, topic] of (options?.topics ?? []).entries())
    if (typeof topic !== 'string' || topic === '')
      issues.push({ path: `topics[${i}]`, message: 'must be a non-empty string' });
  if (issues.length > 0) throw new InvalidInputError('AmqpTransport options', issues);
  return {
    ...options,
    url: options.url ?? process.env.SKEIN_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672',
    connectionName: options.connectionName ?? `skein:${options.prefix}:${process.pid}`,
    connectTimeoutMs: timeout,
    backoff,
  };
}

function checkConsume(topic: string, prefetch: number, maxAttempts: number): void {
  const issues: { path: string; message: string }[] = [];
  if (typeof topic !== 'string' || topic === '')
    issues.push({ path: 'topic', message: 'must be a non-empty string' });
  if (!Number.isSafeInteger(prefetch) || prefetch < 1 || prefetch > 65_535)
    issues.push({ path: 'prefetch', message: `must be an integer from 1 to 65535, got ${prefetch}` });
  if (!Number.isSafeInteger(maxAttempts) || maxAttempts < 1)
    issues.push({ path: 'maxAttempts', message: `must be an integer >= 1, got ${maxAttempts}` });
  if (issues.length > 0) throw new InvalidInputError('AmqpTransport.consume options', issues);
}

/** The URL without its password, for messages. */
function redact(url: string): string {
  return url.replace(/\/\/([^:@/]+):[^@/]*@/, '//$1:***@');
}
