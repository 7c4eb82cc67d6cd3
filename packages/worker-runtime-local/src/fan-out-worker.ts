/**
 * `FanOutWorker` (docs/fan-out.md#workers): consumes the chunk-ready messages of the shards it
 * serves, claims each chunk by `(fanOutId, shard, chunkId)` with the message's write epoch
 * (F3), runs the chunk's items through their task with bounded parallelism, renews the chunk
 * and attempt leases while it works, persists results in batches under the attempt guard (F4),
 * and releases the chunk with its last batch of results (done, waiting for a retry window,
 * requeued, failed; F5). The handler resolves, and the message is acked, only once all of that
 * is persisted: a worker that dies mid-chunk leaves the message unacked and the chunk lease to
 * expire (F8).
 */
import type { Subscription, Transport, TransportMessage } from '@skein/worker-runtime';
import {
  type AnyTask,
  FanOutStaleAttemptError,
  type FanOutStore,
  InvalidInputError,
  type Runtime,
  type Stores,
} from '@skein/workflow-runtime';
import {
  decode as defaultDecode,
  encode as defaultEncode,
  describeTaskError,
  HOME_SHARD,
  newId,
  runTaskAttempt,
  taskRetryAt,
} from '@skein/workflow-runtime/internal';
import {
  type ChunkClaim,
  type ChunkClaimRef,
  type ChunkReadyPayload,
  chunkReadyTopic,
  type ItemResult,
  type ReleaseOutcome,
} from '@skein/workflow-runtime/spi';

/** Options of {@link FanOutWorker}. */
export interface FanOutWorkerOptions {
  /**
   * The runtime whose fan-outs it works: its store is the home, `runtime.fanOutShards` the
   * shards (default: none; then `stores`, or `home` and `shards`).
   */
  runtime?: Pick<Runtime, 'fanOutShards'>;
  /** Stores whose fan-out tables are the home and the one shard (`HOME_SHARD`) (default: none). */
  stores?: Pick<Stores, 'fanOuts'>;
  /** The home store of the fan-outs (where their rows are): the worker reads each fan-out's task from it (default: from `runtime` or `stores`). */
  home?: FanOutStore;
  /** The store of each shard by its store alias (a chunk message names it); the worker serves these shards (default: from `runtime` or `stores`). */
  shards?: Readonly<Record<string, FanOutStore>>;
  /** The shards this worker serves (default: every shard of `shards`). A message of another is quarantined. */
  serves?: readonly string[];
  /** Where chunk-ready messages come from; one transport per store for `StoreTransport`s of several files. */
  transport: Transport | readonly Transport[];
  /** The tasks it can run, by name and version. */
  tasks: readonly AnyTask[];
  /** Chunks worked at once per served shard and transport: the consumer's prefetch (default: 1). */
  maxInFlightChunks?: number;
  /** Items of one chunk run at once (default: 8). */
  parallelism?: number;
  /** The chunk lease (and the attempt leases); renewed every third of it (default: 30 000). */
  leaseMs?: number;
  /** Results persisted per write (default: 100); the rest at the chunk's end. */
  batchSize?: number;
  /** Processing failures of a chunk before it fails (default: the store's, 3). */
  maxProcessingFailures?: number;
  /** Names this worker in leases (default: a fresh ULID with `worker-`). */
  workerId?: string;
  /** Milliseconds since the epoch (default: `Date.now`). */
  clock?: () => number;
  /** Encodes an output, decodes an input (default: the codec). */
  codec?: { encode(value: unknown): string; decode(text: string): unknown };
  /** Told of errors nobody else sees (default: `console.error`). */
  onError?: (error: unknown, context: string) => void;
}

/** What a worker did so far. */
export interface FanOutWorkerStats {
  /** Chunks it claimed. */
  claimed: number;
  /** Messages that found their chunk held, finished, not yet due, or of another epoch: acked, nothing done. */
  refused: number;
  /** Results it persisted. */
  results: number;
  /** Chunks it lost mid-work (its lease lapsed, or a stale write was refused). */
  lost: number;
}

const payloadShape = (value: unknown): value is ChunkReadyPayload => {
  const p = value as Partial<ChunkReadyPayload> | null;
  return (
    typeof p?.fanOutId === 'string' &&
    typeof p.shard === 'string' &&
    typeof p.storeAlias === 'string' &&
    Number.isSafeInteger(p.chunkId) &&
    Number.isSafeInteger(p.writeEpoch)
  );
};

/**
 * Works fan-out chunks; see the module comment.
 * @example
 * const worker = new FanOutWorker({ home: stores.fanOuts, shards: { main: stores.fanOuts },
 *   transport: new StoreTransport({ stores }), tasks: [score], parallelism: 8 });
 * await worker.start();
 * // …
 * await worker.stop();
 */
export class FanOutWorker {
  readonly workerId: string;
  private readonly tasks = new Map<string, AnyTask>();
  private readonly transports: readonly Transport[];
  private readonly serves: readonly string[];
  private readonly clock: () => number;
  private readonly leaseMs: number;
  private readonly parallelism: number;
  private readonly batchSize: number;
  private readonly codec: { encode(value: unknown): string; decode(text: string): unknown };
  private readonly onError: (error: unknown, context: string) => void;
  private readonly taskOf = new Map<string, Promise<AnyTask | string>>();
  private readonly working = new Set<AbortController>();
  private subscriptions: Subscription[] = [];
  private readonly counts: FanOutWorkerStats = { claimed: 0, refused: 0, results: 0, lost: 0 };
  private readonly home: FanOutStore;
  private readonly shards: Readonly<Record<string, FanOutStore>>;

  constructor(private readonly options: FanOutWorkerOptions) {
    this.workerId = options?.workerId ?? `worker-${newId()}`;
    const { home, shards } = storesOf(options);
    this.home = home as FanOutStore;
    this.shards = shards;
    this.transports = Array.isArray(options.transport) ? options.transport : [options.transport as Transport];
    this.serves = options.serves ?? Object.keys(shards);
    this.clock = options.clock ?? Date.now;
    this.leaseMs = options.leaseMs ?? 30_000;
    this.parallelism = options.parallelism ?? 8;
    this.batchSize = options.batchSize ?? 100;
    this.codec = options.codec ?? { encode: defaultEncode, decode: defaultDecode };
    this.onError = options.onError ?? ((error, context) => console.error(`skein: ${context}:`, error));
    const issues = checkOptions(options, home, shards, this.serves, this.transports);
    if (issues.length > 0) throw new InvalidInputError('FanOutWorker options', issues);
    for (const task of options.tasks) this.tasks.set(taskKey(task.name, task.version), task);
  }

  /** Start consuming the chunk-ready topics of the served shards. */
  async start(): Promise<void> {
    const prefetch = this.options.maxInFlightChunks ?? 1;
    for (const transport of this.transports)
      for (const shard of this.serves)
        this.subscriptions.push(
          await transport.consume(chunkReadyTopic(shard), (message) => this.handle(message), { prefetch }),
        );
  }

  /** Stop: chunks in flight stop starting items, persist what finished, and are released for another worker. */
  async stop(): Promise<void> {
    for (const controller of this.working) controller.abort();
    await Promise.all(this.subscriptions.map((subscription) => subscription.close()));
    this.subscriptions = [];
  }

  /** What this worker did so far. */
  stats(): FanOutWorkerStats {
    return { ...this.counts };
  }

  /** Handle one chunk-ready message; resolves once everything it did is persisted. */
  async handle(message: TransportMessage): Promise<'ack' | 'quarantine'> {
    let payload: unknown;
    try {
      payload = JSON.parse(message.payload);
    } catch {
      payload = undefined;
    }
    if (!payloadShape(payload)) return 'quarantine';
    const store = this.shards[payload.storeAlias];
    if (store === undefined || !this.serves.includes(payload.shard)) return 'quarantine';
    const claimed = await store.claimChunk({
      fanOutId: payload.fanOutId,
      shard: payload.shard,
      chunkId: payload.chunkId,
      writeEpoch: payload.writeEpoch,
      workerId: this.workerId,
      now: this.clock(),
      leaseMs: this.leaseMs,
    });
    if (!claimed.claimed) {
      this.counts.refused += 1;
      return 'ack';
    }
    this.counts.claimed += 1;
    await this.work(store, claimed.claim);
    return 'ack';
  }

  /** Run a claimed chunk to its release. */
  private async work(store: FanOutStore, claim: ChunkClaim): Promise<void> {
    const ref: ChunkClaimRef = {
      fanOutId: claim.fanOutId,
      shard: claim.shard,
      chunkId: claim.chunkId,
      workerId: claim.workerId,
      leaseToken: claim.leaseToken,
    };
    const controller = new AbortController();
    this.working.add(controller);
    const renewal = setInterval(
      () => {
        store.renewChunk(ref, this.clock(), this.leaseMs).then(
          (renewed) => {
            if (!renewed) controller.abort();
          },
          (error: unknown) =>
            this.onError(error, `FanOutWorker: renew chunk ${claim.chunkId} of "${claim.fanOutId}"`),
        );
      },
      Math.max(1, Math.floor(this.leaseMs / 3)),
    );
    renewal.unref?.();
    try {
      const task = await this.resolveTask(claim.fanOutId);
      if (typeof task === 'string') {
        await this.release(store, ref, task);
        return;
      }
      const { ended, last } = await this.runItems(store, ref, claim, task, controller.signal);
      if (ended === 'lost') {
        this.counts.lost += 1;
        return;
      }
      await this.release(store, ref, ended, last);
    } finally {
      clearInterval(renewal);
      this.working.delete(controller);
    }
  }

  /**
   * Run the items with bounded parallelism, flushing full batches as they fill; says how it
   * ended, and gives the last batch (not yet persisted) to go with the release.
   */
  private async runItems(
    store: FanOutStore,
    ref: ChunkClaimRef,
    claim: ChunkClaim,
    task: AnyTask,
    signal: AbortSignal,
  ): Promise<{ ended: undefined | string | 'lost'; last: ItemResult[] }> {
    const pending: ItemResult[] = [];
    let flushing: Promise<void> = Promise.resolve();
    let ended: undefined | string | 'lost';
    const flush = () => {
      const batch = pending.splice(0);
      if (batch.length === 0) return flushing;
      flushing = flushing.then(async () => {
        if (ended !== undefined) return;
        try {
          await store.recordResults(ref, batch, this.clock());
          this.counts.results += batch.length;
        } catch (error) {
          ended = error instanceof FanOutStaleAttemptError ? 'lost' : describeTaskError(error);
          if (ended !== 'lost') this.onError(error, `FanOutWorker: persist results of chunk ${ref.chunkId}`);
        }
      });
      return flushing;
    };
    let next = 0;
    let finished = 0;
    const runner = async () => {
      while (next < claim.items.length && !signal.aborted && ended === undefined) {
        const item = claim.items[next]!;
        next += 1;
        const info = {
          attempt: item.attempt,
          index: item.index,
          fanOutId: ref.fanOutId,
          workerId: this.workerId,
          signal,
        };
        const outcome = await runTaskAttempt(task, this.codec.decode(item.input), info);
        if (signal.aborted) return;
        const base = { index: item.index, attemptId: item.attemptId, attempt: item.attempt };
        const key = `${ref.fanOutId}/${item.index}`;
        pending.push(
          outcome.status === 'succeeded'
            ? { ...base, status: 'succeeded', output: this.codec.encode(outcome.output) }
            : {
                ...base,
                status: 'failed',
                error: describeTaskError(outcome.error),
                retryAt: taskRetryAt(task, item.attempt, outcome.retryable, key, this.clock()),
              },
        );
        finished += 1;
        // A full batch is written now, unless it is the chunk's last: that one goes with the release.
        if (pending.length >= this.batchSize && finished < claim.items.length) void flush();
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.parallelism, claim.items.length) }, runner));
    await flushing;
    // When the lease was lost (a renewal failed) or the worker is stopping, the release tells which.
    return { ended, last: ended === undefined ? pending.splice(0) : [] };
  }

  /**
   * Release the chunk with its last results (one call: F4's guard, then F5); a release that
   * finds the claim gone, or whose results are stale, counts as lost. Results the store cannot
   * persist for another reason are a processing failure, as a failed flush is.
   */
  private async release(
    store: FanOutStore,
    ref: ChunkClaimRef,
    processingFailure: string | undefined,
    results: readonly ItemResult[] = [],
  ): Promise<void> {
    const options =
      processingFailure === undefined
        ? { now: this.clock(), ...(results.length > 0 ? { results } : {}) }
        : {
            now: this.clock(),
            processingFailure,
            ...(this.options.maxProcessingFailures === undefined
              ? {}
              : { maxProcessingFailures: this.options.maxProcessingFailures }),
          };
    let outcome: ReleaseOutcome;
    try {
      outcome = await store.releaseChunk(ref, options);
    } catch (error) {
      if (results.length === 0 || processingFailure !== undefined) throw error;
      if (error instanceof FanOutStaleAttemptError) {
        this.counts.lost += 1;
        return;
      }
      this.onError(error, `FanOutWorker: persist results of chunk ${ref.chunkId}`);
      await this.release(store, ref, describeTaskError(error));
      return;
    }
    if (outcome.status === 'lost') this.counts.lost += 1;
    else this.counts.results += results.length;
  }

  /** The task of a fan-out (cached), or why it cannot run here. */
  private resolveTask(fanOutId: string): Promise<AnyTask | string> {
    let found = this.taskOf.get(fanOutId);
    if (found === undefined) {
      found = this.home.get(fanOutId).then((row) => {
        if (row === null) return `fan-out "${fanOutId}" is not in this worker's home store`;
        const task = this.tasks.get(taskKey(row.task, row.taskVersion));
        return task ?? `this worker has no task "${row.task}" version ${row.taskVersion}`;
      });
      found.catch(() => this.taskOf.delete(fanOutId));
      this.taskOf.set(fanOutId, found);
    }
    return found;
  }
}

function taskKey(name: string, version: number): string {
  return `${name}@${version}`;
}

/** The home and shard stores the options name, from `home`/`shards`, else `runtime`, else `stores`. */
function storesOf(options: FanOutWorkerOptions): {
  home: FanOutStore | undefined;
  shards: Readonly<Record<string, FanOutStore>>;
} {
  const fromRuntime = options?.runtime?.fanOutShards;
  const defined = (map: Readonly<Record<string, FanOutStore | undefined>>) =>
    Object.fromEntries(
      Object.entries(map).filter((entry): entry is [string, FanOutStore] => entry[1] !== undefined),
    );
  const shards =
    options?.shards ??
    (fromRuntime !== undefined
      ? defined(fromRuntime)
      : options?.stores?.fanOuts !== undefined
        ? { [HOME_SHARD]: options.stores.fanOuts }
        : {});
  const home = options?.home ?? fromRuntime?.[HOME_SHARD] ?? options?.stores?.fanOuts;
  return { home, shards };
}

function checkOptions(
  options: FanOutWorkerOptions,
  home: FanOutStore | undefined,
  shards: Readonly<Record<string, FanOutStore>>,
  serves: readonly string[],
  transports: readonly Transport[],
): { path: string; message: string }[] {
  const issues: { path: string; message: string }[] = [];
  if (home === undefined)
    issues.push({ path: 'home', message: 'is required: give runtime, stores (with fanOuts) or home' });
  if (Object.keys(shards).length === 0)
    issues.push({ path: 'shards', message: 'must name at least one shard store' });
  if (transports.length === 0 || transports.some((t) => typeof t?.consume !== 'function'))
    issues.push({ path: 'transport', message: 'must be a Transport or a non-empty list of them' });
  if (!Array.isArray(options?.tasks) || options.tasks.length === 0)
    issues.push({ path: 'tasks', message: 'must list at least one task (defineTask)' });
  for (const shard of serves)
    if (shards[shard] === undefined)
      issues.push({ path: 'serves', message: `shard "${shard}" has no store in shards` });
  const positive = {
    maxInFlightChunks: options?.maxInFlightChunks,
    parallelism: options?.parallelism,
    leaseMs: options?.leaseMs,
    batchSize: options?.batchSize,
  };
  for (const [path, value] of Object.entries(positive))
    if (value !== undefined && !(Number.isSafeInteger(value) && value >= 1))
      issues.push({ path, message: `must be an integer >= 1, got ${String(value)}` });
  return issues;
}
