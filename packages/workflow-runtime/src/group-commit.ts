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

interface Pending<Req, Res> {
  request: Req;
  resolve(value: Res): void;
  reject(error: unknown): void;
}

/** Batches requests into flushes; see the module comment. */
export class GroupCommit<Req, Res> {
  private queue: Pending<Req, Res>[] = [];
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
    return new Promise<Res>((resolve, reject) => {
      this.queue.push({ request, resolve, reject });
      this.schedule();
    });
  }

  /** Requests waiting for a flush. */
  get pending(): number {
    return this.queue.length;
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= this.maxInFlight) return;
    this.scheduled = true;
    // setImmediate runs after every ready microtask: callers resumed by the previous flush
    // get to submit their next request before this one closes the batch.
    setImmediate(() => {
      this.scheduled = false;
      void this.run();
    });
  }

  private async run(): Promise<void> {
    if (this.queue.length === 0) return;
    const batch = this.queue.length <= this.maxBatch ? this.queue : this.queue.slice(0, this.maxBatch);
    this.queue = batch === this.queue ? [] : this.queue.slice(this.maxBatch);
    this.inFlight += 1;
    try {
      const outcomes = await this.flush(batch.map((item) => item.request));
      batch.forEach((item, i) => {
        const outcome = outcomes[i];
        if (outcome === undefined) item.reject(new Error('group commit: flush returned too few outcomes'));
        else if (outcome.ok) item.resolve(outcome.value);
        else item.reject(outcome.error);
      });
    } catch (error) {
      for (const item of batch) item.reject(error);
    } finally {
      this.inFlight -= 1;
      if (this.queue.length > 0) this.schedule();
    }
  }
}
