/**
 * The log writer of one execution attempt. Events are recorded into a buffer (encoded and
 * size-checked at once, so a bad value is refused before anything is written) and made
 * durable by `flush`, which the context calls only where durability matters: before a step's
 * function runs and before an outcome is reported. So a step costs one append, and events
 * recorded between two steps (its completion, `now()`, the next step's start) share it.
 */
import { assertPayloadSize, type Codec, defaultCodec } from './codec.js';
import { StaleFenceError, StartFencedOutError } from './errors.js';
import type { EventType } from './events.js';
import { applyEvent, type ExecutionState, type FoldableEvent } from './fold.js';
import { newId } from './ids.js';
import type { ObservedRecord } from './observers.js';
import type { OutboxMessage } from './outbox.js';
import type { EventDraft, EventStore } from './spi.js';

/** Options of {@link LogWriter}. */
export interface LogWriterOptions {
  events: EventStore;
  executionId: string;
  workflow: string;
  fence: number;
  /** Seq the next event gets. */
  nextSeq: number;
  maxPayloadBytes: number;
  clock: () => number;
  /** Encodes the payloads and gives the views the state holds (default: {@link defaultCodec}). */
  codec?: Codec;
  /**
   * Called after a flush when the state is exactly the durable log; `fromSeq` is the flush's
   * first seq. The flush waits for the promise it returns, if any.
   */
  onDurable?: (state: ExecutionState, fromSeq: number) => Promise<void> | undefined;
  /**
   * Called with the events of each durable append, as recorded (undecoded payloads), when the
   * runtime has observers; without it the writer keeps no such record.
   */
  onAppended?: (state: ExecutionState, fence: number, records: readonly ObservedRecord[]) => void;
}

/** Buffers, encodes and appends the events of one execution attempt, in order. */
export class LogWriter {
  private buffer: EventDraft[] = [];
  /** The recorded events of `buffer`, kept only for observers (`onAppended`). */
  private observed: ObservedRecord[] | undefined;
  private bufferStart: number;
  /** Outbox messages that ride the next append (O1). */
  private outbox: OutboxMessage[] | undefined;
  private chain: Promise<void> = Promise.resolve();
  private failure: unknown = undefined;
  /** Appends started and not yet settled. */
  private appending = 0;
  /** The first flush's append, once made. */
  private first: Promise<void> | undefined;
  /** What `firstAppend` handed out before the first flush: settled by it. */
  private firstWaiter: { promise: Promise<void>; resolve(): void; reject(error: unknown): void } | undefined;
  /** The state with every recorded event applied (durable or not). */
  state: ExecutionState | null;

  constructor(
    private readonly options: LogWriterOptions,
    state: ExecutionState | null,
  ) {
    this.state = state;
    this.bufferStart = options.nextSeq;
    if (options.onAppended !== undefined) this.observed = [];
  }

  /**
   * Settles with the outcome of the first append this writer makes (seq 0 for a new
   * execution). Made when first asked: after the first flush it is that flush's own promise,
   * so a run that never asks before then allocates nothing for it.
   */
  get firstAppend(): Promise<void> {
    if (this.first !== undefined) return this.first;
    if (this.firstWaiter === undefined) {
      let settle!: { resolve(): void; reject(error: unknown): void };
      const promise = new Promise<void>((resolve, reject) => {
        settle = { resolve, reject };
      });
      // The same outcome also reaches whoever awaits flush(); this copy may have no listener.
      promise.catch(() => undefined);
      this.firstWaiter = { promise, ...settle };
    }
    return this.firstWaiter.promise;
  }

  /** Fence this writer appends with. */
  get fence(): number {
    return this.options.fence;
  }

  /** The error that stopped this writer, if any. Once set, every later call throws it. */
  get failed(): unknown {
    return this.failure;
  }

  /** The codec this writer encodes with; decoding with it gives what the log holds. */
  get codec(): Codec {
    return this.options.codec ?? defaultCodec;
  }

  /**
   * Record an event. Encodes now: a value the codec refuses or one over the size limit
   * throws here and nothing is recorded. The state gets the payload as decoding the log
   * gives it (adr/0020), so the first run sees what a replay sees.
   * @param where what the payload is, for error messages.
   */
  record(type: EventType, payload: unknown, where: string): ExecutionState {
    if (this.failure !== undefined) throw this.failure;
    const { text, view } = this.codec.record(payload);
    assertPayloadSize(this.options.executionId, where, text, this.options.maxPayloadBytes);
    const recordedAt = this.options.clock();
    const seq = this.bufferStart + this.buffer.length;
    this.buffer.push({ envelopeId: newId(), type, payload: text, recordedAt });
    if (this.observed !== undefined) this.observed.push({ type, payload: view, recordedAt });
    // `view` is `payload` as the log gives it back: the same shape, so the same type.
    this.state = applyEvent(this.state, {
      executionId: this.options.executionId,
      seq,
      type,
      payload: view,
      fence: this.options.fence,
      recordedAt,
    } as FoldableEvent);
    return this.state;
  }

  /**
   * Once the appends in flight have settled: the seq of the last event this writer made durable
   * (the one before its first when it wrote none), or undefined when an append failed.
   */
  async settledSeq(): Promise<number | undefined> {
    try {
      await this.chain;
    } catch {
      return undefined; // the failure is the writer's (`failed`), reported by the run
    }
    return this.failure === undefined ? this.bufferStart - 1 : undefined;
  }

  /** Write `message` to the store's outbox in the same append as the next flush's events (O1). */
  attachOutbox(message: OutboxMessage): void {
    this.outbox ??= [];
    this.outbox.push(message);
  }

  /** Make every recorded event durable. Rejects with the store's error (and keeps failing after). */
  flush(): Promise<void> {
    if (this.failure !== undefined) return Promise.reject(this.failure);
    if (this.buffer.length > 0) {
      const events = this.buffer;
      const expectedSeq = this.bufferStart;
      const observed = this.observed;
      const outbox = this.outbox;
      this.outbox = undefined;
      this.buffer = [];
      if (observed !== undefined) this.observed = [];
      this.bufferStart += events.length;
      // With no append in flight the store is called now, not a microtask later.
      this.chain =
        this.appending === 0
          ? this.append(expectedSeq, events, observed, outbox)
          : this.chain.then(() => this.append(expectedSeq, events, observed, outbox));
      if (this.first === undefined) {
        this.first = this.chain;
        if (this.firstWaiter !== undefined)
          this.chain.then(this.firstWaiter.resolve, this.firstWaiter.reject);
      }
    }
    return this.chain;
  }

  private async append(
    expectedSeq: number,
    events: EventDraft[],
    observed: readonly ObservedRecord[] | undefined,
    outbox: OutboxMessage[] | undefined,
  ): Promise<void> {
    this.appending += 1;
    try {
      if (this.failure !== undefined) throw this.failure;
      const { executionId, workflow, fence } = this.options;
      try {
        const request = { executionId, workflow, expectedSeq, fence, events };
        await this.options.events.append(outbox === undefined ? request : { ...request, outbox });
      } catch (error) {
        this.failure =
          expectedSeq === 0 && error instanceof StaleFenceError
            ? new StartFencedOutError(executionId, error.fence, error.current, { cause: error })
            : error;
        throw this.failure;
      }
      if (observed !== undefined && this.state !== null)
        this.options.onAppended!(this.state, fence, observed);
      // Snapshot only a state that is exactly the durable log (nothing recorded after it).
      const durableSeq = expectedSeq + events.length - 1;
      if (this.options.onDurable !== undefined && this.state !== null && this.state.sequence === durableSeq) {
        const saving = this.options.onDurable(this.state, expectedSeq);
        if (saving !== undefined) await saving;
      }
    } finally {
      this.appending -= 1;
    }
  }
}
