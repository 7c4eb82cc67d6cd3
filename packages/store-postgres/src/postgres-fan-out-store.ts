/**
 * {@link FanOutStore} on PostgreSQL. A call that changes rows is one transaction on a
 * connection of its own: it locks the row it decides on (the fan-out row, or the chunk row,
 * `FOR UPDATE`; recovery skips chunks another transaction holds), reads the chunk's items,
 * applies the shared rule (`decide*` of @skein/workflow-runtime), and writes back the rows and
 * any chunk-ready messages, into this schema's outbox, before it commits. Two creators or
 * seeders racing on a new row: the loser's insert finds the row taken and the call runs again,
 * now seeing it. Text holding U+0000 is refused with `NulInTextError` before anything is sent.
 */
import { FanOutStaleAttemptError, type FanOutStore } from '@skein/workflow-runtime';
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
  decideCreate,
  decideDispatch,
  decideRecovery,
  decideRelease,
  decideRenew,
  emptyCounts,
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
import type pg from 'pg';
import type { Database, Query } from './database.js';
import { NulInTextError } from './errors.js';
import {
  claimInOneStatement,
  releaseDone,
  resultsAndReleaseDone,
  resultsInOneStatement,
  seedBatch,
} from './fan-out-hot-path.js';
import {
  chunkCountsQuery,
  countsQuery,
  insertChunkQuery,
  insertFanOutQuery,
  insertItemsQuery,
  insertPlacementsQuery,
  lockExpiredQuery,
  lockFanOutQuery,
  selectChunkQuery,
  selectFanOutQuery,
  selectItemPageQuery,
  selectItemRangeQuery,
  selectPlacementsQuery,
  updateChunkQuery,
  updateDispatchedQuery,
  updateFanOutQuery,
  updateItemsQuery,
} from './fan-out-queries.js';
import { hasNul, refuseNul } from './nul-text.js';
import { writeMessagesQuery } from './outbox-queries.js';
import { WAKEUP_OUTBOX } from './postgres-outbox-store.js';
import { channelName } from './wakeups.js';

/** Chunk-ready messages per insert statement of a transaction (a dispatch of 10 000 chunks is 10 statements). */
const MESSAGES_PER_STATEMENT = 1_000;

/** A new row's insert found it taken: the transaction is run again. */
class RowTaken extends Error {}

/** One transaction's connection, with the queries a rule needs. */
class Tx {
  constructor(
    private readonly client: pg.Client,
    private readonly outboxChannel: string,
  ) {}

  async rows<Row extends pg.QueryResultRow>(query: Query): Promise<Row[]> {
    return (await this.client.query<Row>(query)).rows;
  }

  async fanOut(fanOutId: string): Promise<FanOutRecord | null> {
    return (await this.rows<FanOutRecord>(lockFanOutQuery(fanOutId)))[0] ?? null;
  }

  async chunk(fanOutId: string, shard: string, chunkId: number): Promise<ChunkRecord | null> {
    return (await this.rows<ChunkRecord>(selectChunkQuery(fanOutId, shard, chunkId, true)))[0] ?? null;
  }

  async items(chunk: ChunkRecord | null): Promise<ItemRecord[]> {
    if (chunk === null) return [];
    return this.rows<ItemRecord>(
      selectItemRangeQuery(chunk.fanOutId, chunk.firstIndex, chunk.firstIndex + chunk.size),
    );
  }

  async writeChunk(chunk: ChunkRecord, items: readonly ItemRecord[]): Promise<void> {
    await this.client.query(updateChunkQuery(chunk));
    if (items.length > 0) await this.client.query(updateItemsQuery(chunk.fanOutId, items));
  }

  /** Write `messages` `MESSAGES_PER_STATEMENT` at a time, so a dispatch of many chunks holds one statement's worth. */
  async writeMessages(messages: Iterable<OutboxMessage>): Promise<void> {
    let batch: OutboxMessage[] = [];
    for (const message of messages) {
      batch.push(message);
      if (batch.length < MESSAGES_PER_STATEMENT) continue;
      await this.client.query(writeMessagesQuery(batch, this.outboxChannel));
      batch = [];
    }
    if (batch.length > 0) await this.client.query(writeMessagesQuery(batch, this.outboxChannel));
  }
}

/** The fan-out tables in PostgreSQL, with the semantics of `MemoryFanOutStore`. */
export class PostgresFanOutStore implements FanOutStore {
  private readonly outboxChannel: string;

  /** @param db the shared pool, with the schema migrated (see `openPostgresStores`). */
  constructor(private readonly db: Database) {
    this.outboxChannel = channelName(db.schema, WAKEUP_OUTBOX);
  }

  async create(plan: FanOutPlan, lease: CreationLeaseRequest): Promise<CreateFanOutResult> {
    checkFanOutPlan(plan, lease);
    refuseNul('fanOuts.create', plan.executionId, {
      fanOutId: plan.fanOutId,
      executionId: plan.executionId,
      name: plan.name,
      task: plan.task,
      owner: lease.owner,
      ...Object.fromEntries(plan.shards.map((shard, i) => [`shards[${i}]`, shard])),
    });
    return this.transaction(async (tx) => {
      const decision = decideCreate(await tx.fanOut(plan.fanOutId), plan, lease);
      if (decision.write === 'insert') {
        if ((await tx.rows(insertFanOutQuery(decision.row))).length === 0) throw new RowTaken();
      } else if (decision.write === 'update') await tx.rows(updateFanOutQuery(decision.row));
      return decision.result;
    });
  }

  async renewCreation(fanOutId: string, token: string, now: number, ttlMs: number): Promise<boolean> {
    if (hasNul(fanOutId)) return false;
    return this.transaction(async (tx) => {
      const row = await tx.fanOut(fanOutId);
      if (!holdsCreation(row, token) || (row.creationExpiresAt ?? 0) <= now) return false;
      row.creationExpiresAt = now + ttlMs;
      await tx.rows(updateFanOutQuery(row));
      return true;
    });
  }

  async recordSeeded(fanOutId: string, token: string, chunks: number, items: number): Promise<boolean> {
    if (hasNul(fanOutId)) return false;
    return this.transaction(async (tx) => {
      const row = await tx.fanOut(fanOutId);
      if (!holdsCreation(row, token)) return false;
      if (chunks > row.seededChunks) {
        row.seededChunks = chunks;
        row.seededItems = items;
        await tx.rows(updateFanOutQuery(row));
      }
      return true;
    });
  }

  async seedChunk(seed: ChunkSeed): Promise<SeedOutcome> {
    checkChunkSeed(seed);
    refuseNul('fanOuts.seedChunk', undefined, {
      fanOutId: seed.fanOutId,
      shard: seed.shard,
      storeAlias: seed.storeAlias,
      ...Object.fromEntries(seed.inputs.map((input, i) => [`inputs[${i}]`, input])),
    });
    return this.transaction(async (tx) => {
      const existing = await tx.chunk(seed.fanOutId, seed.shard, seed.chunkId);
      if (existing !== null) {
        const inputs = (await tx.items(existing)).map((item) => item.input);
        return sameSeed(existing, inputs, seed) ? 'exists' : 'mismatch';
      }
      if ((await tx.rows(insertChunkQuery(newChunk(seed)))).length === 0) throw new RowTaken();
      await tx.rows(insertItemsQuery(newItems(seed)));
      return 'seeded';
    });
  }

  async seedChunks(seeds: readonly ChunkSeed[], cursor?: SeedCursor): Promise<SeedChunksResult> {
    checkSeedBatch(seeds, cursor);
    seeds.forEach((seed, s) => {
      // The first input holding U+0000 is named; no name is made for the others (a batch is thousands).
      const nul = seed.inputs.findIndex(hasNul);
      refuseNul('fanOuts.seedChunks', undefined, {
        [`seeds[${s}].fanOutId`]: seed.fanOutId,
        [`seeds[${s}].shard`]: seed.shard,
        [`seeds[${s}].storeAlias`]: seed.storeAlias,
        ...(nul < 0 ? {} : { [`seeds[${s}].inputs[${nul}]`]: seed.inputs[nul]! }),
      });
    });
    if (cursor !== undefined && (hasNul(cursor.fanOutId) || hasNul(cursor.token)))
      return { ...(await seedBatch(this.db, seeds, undefined)), cursor: false };
    return seedBatch(this.db, seeds, cursor);
  }

  async dispatch(fanOutId: string, token: string, options: DispatchOptions): Promise<boolean> {
    if (hasNul(fanOutId)) return false;
    return this.transaction(async (tx) => {
      const row = await tx.fanOut(fanOutId);
      if (!holdsCreation(row, token)) return false;
      const { placements, messages } = decideDispatch(row, options);
      await tx.rows(updateFanOutQuery(row));
      await tx.rows(insertPlacementsQuery(placements));
      await tx.writeMessages(messages);
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
    if (hasNul(fanOutId) || hasNul(shard)) return false;
    return this.transaction(async (tx) => {
      const row = await tx.fanOut(fanOutId);
      const placement = (await tx.rows<Placement>(selectPlacementsQuery(fanOutId))).find(
        (p) => p.shard === shard,
      );
      const messages = decideAdvance(row, placement, from, count, now);
      if (messages === null || placement === undefined) return false;
      await tx.rows(updateDispatchedQuery(fanOutId, shard, placement.dispatched));
      await tx.writeMessages(messages);
      return true;
    });
  }

  async fail(fanOutId: string, reason: string, now: number): Promise<boolean> {
    if (hasNul(fanOutId)) return false;
    return this.transaction(async (tx) => {
      const row = await tx.fanOut(fanOutId);
      if (row === null || row.status === 'settled' || row.status === 'failed') return false;
      endFanOut(row, 'failed', now, withoutNul(reason));
      await tx.rows(updateFanOutQuery(row));
      return true;
    });
  }

  async settle(fanOutId: string, summary: string, now: number): Promise<boolean> {
    refuseNul('fanOuts.settle', undefined, { summary });
    if (hasNul(fanOutId)) return false;
    return this.transaction(async (tx) => {
      const row = await tx.fanOut(fanOutId);
      if (row?.status !== 'dispatched') return false;
      endFanOut(row, 'settled', now, null);
      row.summary = summary;
      await tx.rows(updateFanOutQuery(row));
      return true;
    });
  }

  async get(fanOutId: string): Promise<FanOutRecord | null> {
    if (hasNul(fanOutId)) return null;
    return (await this.db.query<FanOutRecord>('fanOuts.get', selectFanOutQuery(fanOutId))).rows[0] ?? null;
  }

  async placements(fanOutId: string): Promise<Placement[]> {
    if (hasNul(fanOutId)) return [];
    return (await this.db.query<Placement>('fanOuts.placements', selectPlacementsQuery(fanOutId))).rows;
  }

  async claimChunk(request: ClaimChunkRequest): Promise<ClaimChunkResult> {
    checkClaimChunk(request);
    if (hasNul(request.fanOutId) || hasNul(request.shard))
      return { claimed: false, reason: 'unknown', chunk: null };
    refuseNul('fanOuts.claimChunk', undefined, { workerId: request.workerId });
    return claimInOneStatement(this.db, request);
  }

  async renewChunk(ref: ChunkClaimRef, now: number, leaseMs: number): Promise<boolean> {
    if (refHasNul(ref)) return false;
    return this.transaction(async (tx) => {
      const chunk = await tx.chunk(ref.fanOutId, ref.shard, ref.chunkId);
      const items = await tx.items(chunk);
      const renewed = decideRenew(chunk, items, ref, now, leaseMs);
      if (renewed) await tx.writeChunk(chunk!, items);
      return renewed;
    });
  }

  async recordResults(
    ref: ChunkClaimRef,
    results: readonly ItemResult[],
    now: number,
  ): Promise<RecordedResults> {
    const clean = checkedResults('fanOuts.recordResults', ref, results);
    if (clean.length === 0) return { succeeded: 0, failed: 0, retryScheduled: 0 };
    return resultsInOneStatement(this.db, ref, clean, now);
  }

  async releaseChunk(ref: ChunkClaimRef, options: ReleaseChunkOptions): Promise<ReleaseOutcome> {
    const results = checkedResults('fanOuts.releaseChunk', ref, options.results ?? []);
    if (refHasNul(ref)) return { status: 'lost' };
    const clean =
      options.processingFailure === undefined
        ? options
        : { ...options, processingFailure: withoutNul(options.processingFailure) };
    if (results.length > 0) {
      // The last batch and, when that closes the chunk, the release: one statement; else the usual release.
      if (await resultsAndReleaseDone(this.db, ref, results, options.now)) return { status: 'done' };
    } else if (await releaseDone(this.db, ref)) return { status: 'done' };
    return this.transaction(async (tx) => {
      const chunk = await tx.chunk(ref.fanOutId, ref.shard, ref.chunkId);
      const items = await tx.items(chunk);
      const { outcome, message } = decideRelease(chunk, items, ref, clean);
      if (outcome.status !== 'lost') await tx.writeChunk(chunk!, items);
      if (message !== undefined) await tx.writeMessages([message]);
      return outcome;
    });
  }

  async recoverExpired(options: RecoverExpiredOptions): Promise<RecoveredChunk[]> {
    return this.transaction(async (tx) => {
      const recovered: RecoveredChunk[] = [];
      for (const chunk of await tx.rows<ChunkRecord>(lockExpiredQuery(options.now, options.limit))) {
        const items = await tx.items(chunk);
        const decision = decideRecovery(chunk, items, options.now, options.recoveryLimit);
        await tx.writeChunk(chunk, items);
        if (decision.message !== undefined) await tx.writeMessages([decision.message]);
        recovered.push(decision.recovered);
      }
      return recovered;
    });
  }

  async chunk(fanOutId: string, shard: string, chunkId: number): Promise<ChunkRecord | null> {
    if (hasNul(fanOutId) || hasNul(shard)) return null;
    const query = selectChunkQuery(fanOutId, shard, chunkId, false);
    return (await this.db.query<ChunkRecord>('fanOuts.chunk', query)).rows[0] ?? null;
  }

  async items(fanOutId: string, query: { afterIndex?: number; limit?: number } = {}): Promise<ItemRecord[]> {
    if (hasNul(fanOutId)) return [];
    const page = selectItemPageQuery(fanOutId, query.afterIndex ?? -1, query.limit ?? DEFAULT_ITEMS_LIMIT);
    return (await this.db.query<ItemRecord>('fanOuts.items', page)).rows;
  }

  async counts(fanOutId: string): Promise<FanOutCounts> {
    const counts = emptyCounts();
    if (hasNul(fanOutId)) return counts;
    const rows = (
      await this.db.query<{ kind: 'chunks' | 'items'; status: string; n: number }>(
        'fanOuts.counts',
        countsQuery(fanOutId),
      )
    ).rows;
    for (const row of rows) (counts[row.kind] as Record<string, number>)[row.status] = row.n;
    return counts;
  }

  async chunkCounts(fanOutId: string): Promise<FanOutCounts['chunks']> {
    const counts = emptyCounts().chunks;
    if (hasNul(fanOutId)) return counts;
    const rows = (
      await this.db.query<{ status: keyof FanOutCounts['chunks']; n: number }>(
        'fanOuts.chunkCounts',
        chunkCountsQuery(fanOutId),
      )
    ).rows;
    for (const row of rows) counts[row.status] = row.n;
    return counts;
  }

  /** Run `body` in one transaction; once more if a new row it inserts was taken meanwhile. */
  private async transaction<R>(body: (tx: Tx) => Promise<R>): Promise<R> {
    try {
      return await this.once(body);
    } catch (error) {
      if (error instanceof RowTaken) return this.once(body);
      throw error;
    }
  }

  /** Run `body` in one transaction on a connection of its own. */
  private async once<R>(body: (tx: Tx) => Promise<R>): Promise<R> {
    const client = await this.db.pool.connect();
    let failed = true;
    try {
      await client.query('BEGIN');
      const result = await body(new Tx(client, this.outboxChannel));
      await client.query('COMMIT');
      failed = false;
      return result;
    } catch (error) {
      failed = !(await client.query('ROLLBACK').then(
        () => true,
        () => false,
      ));
      throw error;
    } finally {
      this.db.pool.release(client, failed);
    }
  }
}

function refHasNul(ref: ChunkClaimRef): boolean {
  return hasNul(ref.fanOutId) || hasNul(ref.shard) || hasNul(ref.workerId) || hasNul(ref.leaseToken);
}

/** A diagnostic as `text` can hold it: U+0000 shown as an escape. */
function withoutNul(text: string): string {
  return text.replaceAll('\u0000', '\\u0000');
}

/**
 * A batch of results checked (`InvalidInputError`; a NUL in an output is refused), with NULs
 * dropped from errors; a stale-attempt error when the claim itself has a NUL (no such lease).
 */
function checkedResults(op: string, ref: ChunkClaimRef, results: readonly ItemResult[]): ItemResult[] {
  checkItemResults(ref, results);
  const nul = results.findIndex((r) => r.status === 'succeeded' && hasNul(r.output));
  if (nul >= 0) throw new NulInTextError(undefined, `results[${nul}]`, op);
  const first = results[0];
  if (first !== undefined && refHasNul(ref))
    throw new FanOutStaleAttemptError(ref.fanOutId, ref.chunkId, first.index, 'the chunk lease is not held');
  return results.map((r) => (r.status === 'failed' ? { ...r, error: withoutNul(r.error) } : r));
}
