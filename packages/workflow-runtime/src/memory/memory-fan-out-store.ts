/** In-memory {@link FanOutStore}: the reference implementation, for tests and examples. */

import {
  checkChunkSeed,
  checkClaimChunk,
  checkFanOutPlan,
  checkItemResults,
  checkSeedBatch,
} from '../fan-out-checks.js';
import { endFanOut, newChunk, newItems } from '../fan-out-rows.js';
import {
  decideAdvance,
  decideClaim,
  decideCreate,
  decideDispatch,
  decideRecovery,
  decideRelease,
  decideRenew,
  decideResults,
  holdsCreation,
  sameSeed,
} from '../fan-out-rules.js';
import {
  type ChunkClaimRef,
  type ChunkRecord,
  type ChunkSeed,
  type ClaimChunkRequest,
  type ClaimChunkResult,
  type CreateFanOutResult,
  type CreationLeaseRequest,
  DEFAULT_ITEMS_LIMIT,
  type DispatchOptions,
  emptyCounts,
  type FanOutCounts,
  type FanOutPlan,
  type FanOutRecord,
  type FanOutStore,
  type ItemRecord,
  type ItemResult,
  type Placement,
  type RecordedResults,
  type RecoverExpiredOptions,
  type RecoveredChunk,
  type ReleaseChunkOptions,
  type ReleaseOutcome,
  type SeedChunksResult,
  type SeedCursor,
  type SeedOutcome,
} from '../fan-out-store.js';
import type { MemoryOutboxStore } from './memory-outbox-store.js';

/**
 * The fan-out tables held in memory. Every call runs without an await between its reads and
 * its writes, so each is one atomic step, as a transaction is in the SQL stores; the rules are
 * fan-out-rules.ts, which the SQL stores apply too.
 */
export class MemoryFanOutStore implements FanOutStore {
  private readonly fanOuts = new Map<string, FanOutRecord>();
  private readonly ledger = new Map<string, Placement[]>();
  private readonly chunks = new Map<string, ChunkRecord>();
  private readonly itemRows = new Map<string, Map<number, ItemRecord>>();

  /** @param outbox where chunk-ready messages are written, with the change that causes them. */
  constructor(private readonly outbox: MemoryOutboxStore) {}

  async create(plan: FanOutPlan, lease: CreationLeaseRequest): Promise<CreateFanOutResult> {
    checkFanOutPlan(plan, lease);
    const decision = decideCreate(this.fanOuts.get(plan.fanOutId) ?? null, plan, lease);
    if (decision.write === 'insert') this.fanOuts.set(plan.fanOutId, decision.row);
    return decision.result;
  }

  async renewCreation(fanOutId: string, token: string, now: number, ttlMs: number): Promise<boolean> {
    const row = this.fanOuts.get(fanOutId) ?? null;
    if (!holdsCreation(row, token) || (row.creationExpiresAt ?? 0) <= now) return false;
    row.creationExpiresAt = now + ttlMs;
    return true;
  }

  async recordSeeded(fanOutId: string, token: string, chunks: number, items: number): Promise<boolean> {
    return this.moveCursor(fanOutId, token, chunks, items);
  }

  async seedChunk(seed: ChunkSeed): Promise<SeedOutcome> {
    checkChunkSeed(seed);
    return this.seedOne(seed);
  }

  async seedChunks(seeds: readonly ChunkSeed[], cursor?: SeedCursor): Promise<SeedChunksResult> {
    checkSeedBatch(seeds, cursor);
    const outcomes = seeds.map((seed) => this.seedOne(seed));
    if (cursor === undefined) return { outcomes, cursor: null };
    const moved =
      !outcomes.includes('mismatch') &&
      this.moveCursor(cursor.fanOutId, cursor.token, cursor.seededChunks, cursor.seededItems);
    return { outcomes, cursor: moved };
  }

  private moveCursor(fanOutId: string, token: string, chunks: number, items: number): boolean {
    const row = this.fanOuts.get(fanOutId) ?? null;
    if (!holdsCreation(row, token)) return false;
    if (chunks > row.seededChunks) {
      row.seededChunks = chunks;
      row.seededItems = items;
    }
    return true;
  }

  private seedOne(seed: ChunkSeed): SeedOutcome {
    const key = chunkKey(seed.fanOutId, seed.shard, seed.chunkId);
    const existing = this.chunks.get(key);
    if (existing !== undefined) {
      const inputs = this.itemsOf(existing).map((item) => item.input);
      return sameSeed(existing, inputs, seed) ? 'exists' : 'mismatch';
    }
    this.chunks.set(key, newChunk(seed));
    const items = this.itemRows.get(seed.fanOutId) ?? new Map<number, ItemRecord>();
    this.itemRows.set(seed.fanOutId, items);
    for (const item of newItems(seed)) items.set(item.index, item);
    return 'seeded';
  }

  async dispatch(fanOutId: string, token: string, options: DispatchOptions): Promise<boolean> {
    const row = this.fanOuts.get(fanOutId) ?? null;
    if (!holdsCreation(row, token)) return false;
    const { placements, messages } = decideDispatch(row, options);
    this.ledger.set(fanOutId, placements);
    this.outbox.insert([...messages]);
    return true;
  }

  async advanceDispatch(
    fanOutId: string,
    shard: string,
    from: number,
    count: number,
    now: number,
  ): Promise<boolean> {
    const placement = this.ledger.get(fanOutId)?.find((p) => p.shard === shard);
    const messages = decideAdvance(this.fanOuts.get(fanOutId) ?? null, placement, from, count, now);
    if (messages === null) return false;
    this.outbox.insert(messages);
    return true;
  }

  async fail(fanOutId: string, reason: string, now: number): Promise<boolean> {
    const row = this.fanOuts.get(fanOutId);
    if (row === undefined || row.status === 'settled' || row.status === 'failed') return false;
    endFanOut(row, 'failed', now, reason);
    return true;
  }

  async settle(fanOutId: string, summary: string, now: number): Promise<boolean> {
    const row = this.fanOuts.get(fanOutId);
    if (row?.status !== 'dispatched') return false;
    endFanOut(row, 'settled', now, null);
    row.summary = summary;
    return true;
  }

  async get(fanOutId: string): Promise<FanOutRecord | null> {
    const row = this.fanOuts.get(fanOutId);
    return row === undefined ? null : { ...row, shards: [...row.shards] };
  }

  async placements(fanOutId: string): Promise<Placement[]> {
    return (this.ledger.get(fanOutId) ?? []).map((placement) => ({ ...placement }));
  }

  async claimChunk(request: ClaimChunkRequest): Promise<ClaimChunkResult> {
    checkClaimChunk(request);
    const chunk = this.chunks.get(chunkKey(request.fanOutId, request.shard, request.chunkId)) ?? null;
    return decideClaim(chunk, chunk === null ? [] : this.itemsOf(chunk), request);
  }

  async renewChunk(ref: ChunkClaimRef, now: number, leaseMs: number): Promise<boolean> {
    const chunk = this.chunkOf(ref);
    return decideRenew(chunk, chunk === null ? [] : this.itemsOf(chunk), ref, now, leaseMs);
  }

  async recordResults(
    ref: ChunkClaimRef,
    results: readonly ItemResult[],
    now: number,
  ): Promise<RecordedResults> {
    checkItemResults(ref, results);
    return decideResults(this.chunkOf(ref), this.itemRows.get(ref.fanOutId) ?? new Map(), ref, results, now);
  }

  async releaseChunk(ref: ChunkClaimRef, options: ReleaseChunkOptions): Promise<ReleaseOutcome> {
    const chunk = this.chunkOf(ref);
    if (options.results !== undefined && options.results.length > 0) {
      checkItemResults(ref, options.results);
      decideResults(chunk, this.itemRows.get(ref.fanOutId) ?? new Map(), ref, options.results, options.now);
    }
    const { outcome, message } = decideRelease(
      chunk,
      chunk === null ? [] : this.itemsOf(chunk),
      ref,
      options,
    );
    if (message !== undefined) this.outbox.insert([message]);
    return outcome;
  }

  async recoverExpired(options: RecoverExpiredOptions): Promise<RecoveredChunk[]> {
    const expired = [...this.chunks.values()]
      .filter((chunk) => chunk.status === 'leased' && (chunk.leaseExpiresAt ?? 0) <= options.now)
      .sort((a, b) => (a.leaseExpiresAt ?? 0) - (b.leaseExpiresAt ?? 0))
      .slice(0, options.limit);
    return expired.map((chunk) => {
      const { recovered, message } = decideRecovery(
        chunk,
        this.itemsOf(chunk),
        options.now,
        options.recoveryLimit,
      );
      if (message !== undefined) this.outbox.insert([message]);
      return recovered;
    });
  }

  async chunk(fanOutId: string, shard: string, chunkId: number): Promise<ChunkRecord | null> {
    const chunk = this.chunks.get(chunkKey(fanOutId, shard, chunkId));
    return chunk === undefined ? null : { ...chunk };
  }

  async items(fanOutId: string, query: { afterIndex?: number; limit?: number } = {}): Promise<ItemRecord[]> {
    const after = query.afterIndex ?? -1;
    return [...(this.itemRows.get(fanOutId)?.values() ?? [])]
      .filter((item) => item.index > after)
      .sort((a, b) => a.index - b.index)
      .slice(0, query.limit ?? DEFAULT_ITEMS_LIMIT)
      .map((item) => ({ ...item }));
  }

  async counts(fanOutId: string): Promise<FanOutCounts> {
    const counts = emptyCounts();
    for (const chunk of this.chunks.values())
      if (chunk.fanOutId === fanOutId) counts.chunks[chunk.status] += 1;
    for (const item of this.itemRows.get(fanOutId)?.values() ?? []) counts.items[item.status] += 1;
    return counts;
  }

  async chunkCounts(fanOutId: string): Promise<FanOutCounts['chunks']> {
    const counts = emptyCounts().chunks;
    for (const chunk of this.chunks.values()) if (chunk.fanOutId === fanOutId) counts[chunk.status] += 1;
    return counts;
  }

  private chunkOf(ref: ChunkClaimRef): ChunkRecord | null {
    return this.chunks.get(chunkKey(ref.fanOutId, ref.shard, ref.chunkId)) ?? null;
  }

  private itemsOf(chunk: ChunkRecord): ItemRecord[] {
    const rows = this.itemRows.get(chunk.fanOutId);
    const items: ItemRecord[] = [];
    for (let index = chunk.firstIndex; index < chunk.firstIndex + chunk.size; index += 1) {
      const item = rows?.get(index);
      if (item !== undefined) items.push(item);
    }
    return items;
  }
}

function chunkKey(fanOutId: string, shard: string, chunkId: number): string {
  return `${fanOutId}\u0000${shard}\u0000${chunkId}`;
}
