/**
 * {@link FanOutStore} on SQLite. Every call is one BEGIN IMMEDIATE transaction (the write lock
 * from the start, across processes): it reads the rows the call concerns, applies the shared
 * rule (`decide*` of @skein/workflow-runtime), and writes back the rows and any chunk-ready
 * messages, into this file's outbox, before it commits.
 */
import type { FanOutStore } from '@skein/workflow-runtime';
import {
  type ChunkClaimRef,
  type ChunkRecord,
  type ChunkSeed,
  type ClaimChunkRequest,
  type ClaimChunkResult,
  type CreateFanOutResult,
  type CreationLeaseRequest,
  checkChunkSeed,
  checkClaimChunk,
  checkFanOutPlan,
  checkItemResults,
  checkSeedBatch,
  DEFAULT_ITEMS_LIMIT,
  type DispatchOptions,
  decideAdvance,
  decideClaim,
  decideCreate,
  decideDispatch,
  decideRecovery,
  decideRelease,
  decideRenew,
  decideResults,
  endFanOut,
  type FanOutCounts,
  type FanOutPlan,
  type FanOutRecord,
  holdsCreation,
  type ItemRecord,
  type ItemResult,
  newChunk,
  newItems,
  type OutboxMessage,
  type Placement,
  type RecordedResults,
  type RecoverExpiredOptions,
  type RecoveredChunk,
  type ReleaseChunkOptions,
  type ReleaseOutcome,
  type SeedChunksResult,
  type SeedCursor,
  type SeedOutcome,
  sameSeed,
} from '@skein/workflow-runtime/spi';
import type Database from 'better-sqlite3';
import {
  insertChunk,
  insertItem,
  insertPlacement,
  selectChunk,
  selectChunkCounts,
  selectCounts,
  selectExpired,
  selectFanOut,
  selectItemPage,
  selectItemRange,
  selectPlacements,
  updateChunk,
  updateDispatched,
  updateItem,
  writeFanOut,
} from './fan-out-queries.js';
import { insertOutboxMessage } from './outbox-queries.js';

/** The fan-out tables of one SQLite file, with the semantics of `MemoryFanOutStore`. */
export class SqliteFanOutStore implements FanOutStore {
  private readonly q;
  private readonly tx: <R>(fn: () => R) => R;

  /** @param db an open connection with the schema migrated (see `openSqliteStores`). */
  constructor(db: Database.Database) {
    this.q = {
      fanOut: selectFanOut(db),
      writeFanOut: writeFanOut(db),
      placements: selectPlacements(db),
      insertPlacement: insertPlacement(db),
      dispatched: updateDispatched(db),
      chunk: selectChunk(db),
      expired: selectExpired(db),
      insertChunk: insertChunk(db),
      updateChunk: updateChunk(db),
      itemRange: selectItemRange(db),
      itemPage: selectItemPage(db),
      insertItem: insertItem(db),
      updateItem: updateItem(db),
      counts: selectCounts(db),
      chunkCounts: selectChunkCounts(db),
      outbox: insertOutboxMessage(db),
    };
    const transaction = db.transaction((fn: () => unknown) => fn());
    this.tx = <R>(fn: () => R) => transaction.immediate(fn) as R;
  }

  async create(plan: FanOutPlan, lease: CreationLeaseRequest): Promise<CreateFanOutResult> {
    checkFanOutPlan(plan, lease);
    return this.tx(() => {
      const decision = decideCreate(this.q.fanOut(plan.fanOutId), plan, lease);
      if (decision.write !== null) this.q.writeFanOut(decision.row, decision.write);
      return decision.result;
    });
  }

  async renewCreation(fanOutId: string, token: string, now: number, ttlMs: number): Promise<boolean> {
    return this.tx(() => {
      const row = this.q.fanOut(fanOutId);
      if (!holdsCreation(row, token) || (row.creationExpiresAt ?? 0) <= now) return false;
      row.creationExpiresAt = now + ttlMs;
      this.q.writeFanOut(row, 'update');
      return true;
    });
  }

  async recordSeeded(fanOutId: string, token: string, chunks: number, items: number): Promise<boolean> {
    return this.tx(() => this.moveCursor(fanOutId, token, chunks, items));
  }

  async seedChunk(seed: ChunkSeed): Promise<SeedOutcome> {
    checkChunkSeed(seed);
    return this.tx(() => this.seedOne(seed));
  }

  async seedChunks(seeds: readonly ChunkSeed[], cursor?: SeedCursor): Promise<SeedChunksResult> {
    checkSeedBatch(seeds, cursor);
    return this.tx(() => {
      const outcomes = seeds.map((seed) => this.seedOne(seed));
      if (cursor === undefined) return { outcomes, cursor: null };
      const moved =
        !outcomes.includes('mismatch') &&
        this.moveCursor(cursor.fanOutId, cursor.token, cursor.seededChunks, cursor.seededItems);
      return { outcomes, cursor: moved };
    });
  }

  /** `recordSeeded`'s rule, inside the caller's transaction. */
  private moveCursor(fanOutId: string, token: string, chunks: number, items: number): boolean {
    const row = this.q.fanOut(fanOutId);
    if (!holdsCreation(row, token)) return false;
    if (chunks > row.seededChunks) {
      row.seededChunks = chunks;
      row.seededItems = items;
      this.q.writeFanOut(row, 'update');
    }
    return true;
  }

  /** `seedChunk`'s rule, inside the caller's transaction. */
  private seedOne(seed: ChunkSeed): SeedOutcome {
    const existing = this.q.chunk.get(seed.fanOutId, seed.shard, seed.chunkId) ?? null;
    if (existing !== null) {
      const inputs = this.itemsOf(existing).map((item) => item.input);
      return sameSeed(existing, inputs, seed) ? 'exists' : 'mismatch';
    }
    this.q.insertChunk.run(newChunk(seed));
    for (const item of newItems(seed)) this.q.insertItem.run(item);
    return 'seeded';
  }

  async dispatch(fanOutId: string, token: string, options: DispatchOptions): Promise<boolean> {
    return this.tx(() => {
      const row = this.q.fanOut(fanOutId);
      if (!holdsCreation(row, token)) return false;
      const { placements, messages } = decideDispatch(row, options);
      this.q.writeFanOut(row, 'update');
      placements.forEach((placement, position) => {
        this.q.insertPlacement(placement, position);
      });
      this.writeMessages(messages);
      return true;
    });
  }

  async advanceDispatch(
    fanOutId: string,
    shard: string,
    from: number,
    count: number,
    now: number,
  ): Promise<boolean> {
    return this.tx(() => {
      const placement = this.q.placements.all(fanOutId).find((p) => p.shard === shard);
      const messages = decideAdvance(this.q.fanOut(fanOutId), placement, from, count, now);
      if (messages === null || placement === undefined) return false;
      this.q.dispatched.run({ fanOutId, shard, dispatched: placement.dispatched });
      this.writeMessages(messages);
      return true;
    });
  }

  async fail(fanOutId: string, reason: string, now: number): Promise<boolean> {
    return this.tx(() => {
      const row = this.q.fanOut(fanOutId);
      if (row === null || row.status === 'settled' || row.status === 'failed') return false;
      endFanOut(row, 'failed', now, reason);
      this.q.writeFanOut(row, 'update');
      return true;
    });
  }

  async settle(fanOutId: string, summary: string, now: number): Promise<boolean> {
    return this.tx(() => {
      const row = this.q.fanOut(fanOutId);
      if (row?.status !== 'dispatched') return false;
      endFanOut(row, 'settled', now, null);
      row.summary = summary;
      this.q.writeFanOut(row, 'update');
      return true;
    });
  }

  async get(fanOutId: string): Promise<FanOutRecord | null> {
    return this.q.fanOut(fanOutId);
  }

  async placements(fanOutId: string): Promise<Placement[]> {
    return this.q.placements.all(fanOutId);
  }

  async claimChunk(request: ClaimChunkRequest): Promise<ClaimChunkResult> {
    checkClaimChunk(request);
    return this.tx(() => {
      const chunk = this.q.chunk.get(request.fanOutId, request.shard, request.chunkId) ?? null;
      const items = chunk === null ? [] : this.itemsOf(chunk);
      const result = decideClaim(chunk, items, request);
      if (result.claimed) this.writeChunk(chunk!, items);
      return result;
    });
  }

  async renewChunk(ref: ChunkClaimRef, now: number, leaseMs: number): Promise<boolean> {
    return this.tx(() => {
      const chunk = this.chunkOf(ref);
      const items = chunk === null ? [] : this.itemsOf(chunk);
      const renewed = decideRenew(chunk, items, ref, now, leaseMs);
      if (renewed) this.writeChunk(chunk!, items);
      return renewed;
    });
  }

  async recordResults(
    ref: ChunkClaimRef,
    results: readonly ItemResult[],
    now: number,
  ): Promise<RecordedResults> {
    checkItemResults(ref, results);
    return this.tx(() => {
      const chunk = this.chunkOf(ref);
      const items = new Map((chunk === null ? [] : this.itemsOf(chunk)).map((item) => [item.index, item]));
      const recorded = decideResults(chunk, items, ref, results, now);
      for (const result of results) this.q.updateItem.run(items.get(result.index)!);
      return recorded;
    });
  }

  async releaseChunk(ref: ChunkClaimRef, options: ReleaseChunkOptions): Promise<ReleaseOutcome> {
    const results = options.results ?? [];
    checkItemResults(ref, results);
    return this.tx(() => {
      const chunk = this.chunkOf(ref);
      const items = chunk === null ? [] : this.itemsOf(chunk);
      if (results.length > 0)
        decideResults(chunk, new Map(items.map((item) => [item.index, item])), ref, results, options.now);
      const { outcome, message } = decideRelease(chunk, items, ref, options);
      if (outcome.status !== 'lost') this.writeChunk(chunk!, items);
      if (message !== undefined) this.writeMessages([message]);
      return outcome;
    });
  }

  async recoverExpired(options: RecoverExpiredOptions): Promise<RecoveredChunk[]> {
    return this.tx(() =>
      this.q.expired.all({ now: options.now, limit: options.limit }).map((chunk) => {
        const items = this.itemsOf(chunk);
        const { recovered, message } = decideRecovery(chunk, items, options.now, options.recoveryLimit);
        this.writeChunk(chunk, items);
        if (message !== undefined) this.writeMessages([message]);
        return recovered;
      }),
    );
  }

  async chunk(fanOutId: string, shard: string, chunkId: number): Promise<ChunkRecord | null> {
    return this.q.chunk.get(fanOutId, shard, chunkId) ?? null;
  }

  async items(fanOutId: string, query: { afterIndex?: number; limit?: number } = {}): Promise<ItemRecord[]> {
    return this.q.itemPage.all({
      fanOutId,
      after: query.afterIndex ?? -1,
      limit: query.limit ?? DEFAULT_ITEMS_LIMIT,
    });
  }

  async counts(fanOutId: string): Promise<FanOutCounts> {
    return this.q.counts(fanOutId);
  }

  async chunkCounts(fanOutId: string): Promise<FanOutCounts['chunks']> {
    return this.q.chunkCounts(fanOutId);
  }

  private chunkOf(ref: ChunkClaimRef): ChunkRecord | null {
    return this.q.chunk.get(ref.fanOutId, ref.shard, ref.chunkId) ?? null;
  }

  private itemsOf(chunk: ChunkRecord): ItemRecord[] {
    return this.q.itemRange.all(chunk.fanOutId, chunk.firstIndex, chunk.firstIndex + chunk.size);
  }

  private writeChunk(chunk: ChunkRecord, items: readonly ItemRecord[]): void {
    this.q.updateChunk.run(chunk);
    for (const item of items) this.q.updateItem.run(item);
  }

  private writeMessages(messages: Iterable<OutboxMessage>): void {
    for (const message of messages) this.q.outbox(message);
  }
}
