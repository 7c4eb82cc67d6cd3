/**
 * Group commit: requests submitted while the event loop is busy are handed to one `flush`
 * call (one transaction), and each caller gets its own outcome (L4). Stores use it; it knows
 * nothing of SQL.
 */

/** The outcome of one request in a flushed batch. */
export type Outcome<T> = { ok: true; value: T } | { ok: false; error: unknown };

/** Flushes a batch; returns one outcome per request, in order. Throwing fails every request. */
export type FlushBatch<Req, Res> = (batch: readonly Req[]) => Outcome<Res>[] | Promise<Outcome<Res>[]>;

/** Options of {@link GroupCommit}. */
export interface GroupCommitOptions {
  /** Most requests in one flush (default: 1000). */
  maxBatch?: number;
  /** Flushes in flight at once; more allows pipelining on a pooled connection (default: 1). */
  maxInFlight?: number;
}

/** Batches requests into flushes; see the module comment. */
export class GroupCommit<Req, Res> {
  // Parallel arrays, not one object per request: the requests are handed to `flush` as they
  // are (no copy per batch), and request i is settled by `settles[2i]` (resolve) or
  // `settles[2i + 1]` (reject), so a request costs its promise and nothing more.
  private requests: Req[] = [];
  private settles: ((result: never) => void)[] = [];
  private scheduled = false;
  private inFlight = 0;
  private readonly maxBatch: number;
  private readonly maxInFlight: number;

  constructor(
    private readonly flush: FlushBatch<Req, Res>,
    options: GroupCommitOptions = {},
  ) {
    this.maxBatch = options.maxBatch ?? 1000;
    this.maxInFlight = options.maxInFlight ?? 1;
  }

  /** Queue a request for the next flush; resolves or rejects with this request's own outcome. */
  submit(request: Req): Promise<Res> {
    const promise = new Promise<Res>((resolve, reject) => {
      this.settles.push(resolve, reject);
    });
    this.requests.push(request);
    this.schedule();
    return promise;
  }

  /** Requests waiting for a flush. */
  get pending(): number {
    return this.requests.length;
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.maxInFlight) return;
    this.scheduled = true;
    // setImmediate runs after every ready microtask: callers resumed by the previous flush
    // get to submit their next request before this one closes the batch.
    setImmediate(this.tick);
  }

  /** The scheduled flush, made once (not a closure per batch). */
  private readonly tick = (): void => {
    this.scheduled = false;
    this.run();
  };

  private run(): void {
    if (this.requests.length === 0) return;
    let batch = this.requests;
    let settles = this.settles;
    if (batch.length <= this.maxBatch) {
      this.requests = [];
      this.settles = [];
    } else {
      this.requests = batch.slice(this.maxBatch);
      this.settles = settles.slice(2 * this.maxBatch);
      batch = batch.slice(0, this.maxBatch);
      settles = settles.slice(0, 2 * this.maxBatch);
    }
    this.inFlight += 1;
    let flushed: Outcome<Res>[] | Promise<Outcome<Res>[]>;
    try {
      flushed = this.flush(batch);
    } catch (error) {
      this.settle(batch.length, settles, undefined, error);
      return;
    }
    // A synchronous flush (SQLite) settles its callers now, without a hop through a microtask.
    if (Array.isArray(flushed)) this.settle(batch.length, settles, flushed, undefined);
    else
      flushed.then(
        (outcomes) => this.settle(batch.length, settles, outcomes, undefined),
        (error: unknown) => this.settle(batch.length, settles, undefined, error),
      );
  }

  /** Settle a flushed batch: each request with its outcome, or every one with `error`. */
  private settle(
    count: number,
    settles: readonly ((result: never) => void)[],
    outcomes: readonly Outcome<Res>[] | undefined,
    error: unknown,
  ): void {
    this.inFlight -= 1;
    for (let i = 0; i < count; i++) {
      const outcome = outcomes?.[i];
      const resolve = settles[2 * i] as (value: Res) => void;
      const reject = settles[2 * i + 1] as (error: unknown) => void;
      if (outcomes === undefined) reject(error);
      else if (outcome === undefined) reject(new Error('group commit: flush returned too few outcomes'));
      else if (outcome.ok) resolve(outcome.value);
      else reject(outcome.error);
    }
    if (this.requests.length > 0) this.schedule();
  }
}
