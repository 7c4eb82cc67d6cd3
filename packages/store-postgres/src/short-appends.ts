/**
 * Group commit for the short appends (a start or enqueue, a step append, a status move): while
 * `maxInFlight` statements are out, the appends that arrive wait, and the next statement
 * carries all of them (one round trip, one commit). Under light load nothing waits and every
 * append goes out alone, as its own short statement. Each request is written whole or not at
 * all, and its caller learns which (L4); one that is not written (its head was not as assumed,
 * or the batch failed on a unique violation or a deadlock) takes the full statement on its
 * own, which writes it or says why not. At most one request per execution may wait or be out
 * at a time (the event store's per-execution queue sees to it): outcomes are told apart by
 * execution id. See `adr/0018-postgres-step-append.md` and `adr/0019-group-every-short-append.md`.
 */

import type { Database } from './database.js';
import { notWrittenInBatch } from './errors.js';
import { batchAppendQuery } from './sql/batch-append.js';
import { type ShortAppend, shortAppendQuery, shortAppendRows } from './sql/short-append.js';

interface Waiting {
  item: ShortAppend;
  resolve(written: boolean): void;
  reject(error: unknown): void;
}

/** Sends short appends, grouping those that wait for a free statement slot. */
export class ShortAppends {
  private queue: Waiting[] = [];
  private inFlight = 0;

  /**
   * @param db the shared pool.
   * @param pendingChannel the pending wake-up channel, notified by every enqueue.
   * @param maxInFlight statements out at once; appends beyond wait and are sent together.
   * @param maxBatch most requests in one statement.
   */
  constructor(
    private readonly db: Database,
    private readonly pendingChannel: string,
    private readonly maxInFlight: number,
    private readonly maxBatch = 200,
  ) {}

  /**
   * Append `item.request` if the head is as `item` assumes. Resolves true when every event
   * was written, false when none was; rejects when the database failed.
   */
  submit(item: ShortAppend): Promise<boolean> {
    // Nothing waits and a slot is free: the request goes out at once, alone.
    if (this.inFlight < this.maxInFlight && this.queue.length === 0) return this.sendAlone(item);
    return new Promise<boolean>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (this.inFlight < this.maxInFlight) this.send();
    });
  }

  /** One request, sent at once, holding a slot while it is out. */
  private sendAlone(item: ShortAppend): Promise<boolean> {
    this.inFlight += 1;
    return this.writeOne(item, () => this.freeSlot());
  }

  private freeSlot(): void {
    this.inFlight -= 1;
    if (this.queue.length > 0) this.send();
  }

  private send(): void {
    const batch = this.queue.length <= this.maxBatch ? this.queue : this.queue.slice(0, this.maxBatch);
    this.queue = batch === this.queue ? [] : this.queue.slice(batch.length);
    this.inFlight += 1;
    this.write(batch)
      .then(
        (written) => {
          batch.forEach((waiting, i) => {
            waiting.resolve(written[i]!);
          });
        },
        (error: unknown) => {
          for (const waiting of batch) waiting.reject(error);
        },
      )
      .finally(() => this.freeSlot());
  }

  /** Whether one request was written; `settled` runs as the answer arrives. */
  private writeOne(item: ShortAppend, settled?: () => void): Promise<boolean> {
    return this.db.writeAll(
      'append',
      shortAppendQuery(item, this.pendingChannel),
      shortAppendRows(item),
      settled,
    );
  }

  /** Whether each request of `batch` was written. */
  private async write(batch: readonly Waiting[]): Promise<boolean[]> {
    if (batch.length === 1) return [await this.writeOne(batch[0]!.item)];
    const items = batch.map((waiting) => waiting.item);
    const result = await this.db
      .query<{ executionId: string }>('append', batchAppendQuery(items, this.pendingChannel))
      .catch(notWrittenInBatch);
    if (result === false) return batch.map(() => false);
    const counts = new Map<string, number>();
    for (const row of result.rows) counts.set(row.executionId, (counts.get(row.executionId) ?? 0) + 1);
    return items.map(({ request }) => counts.get(String(request.executionId)) === request.events.length);
  }
}
