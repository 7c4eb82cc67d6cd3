/**
 * Creating a fan-out (F1, F2; docs/fan-out.md#creation): read the items from their source a
 * chunk at a time, seed each chunk into its shard's store, move the creation cursor, and
 * dispatch once the source ends, all under the creation lease (renewed as it goes). A
 * creator that dies leaves the lease to expire; whoever calls `createFanOut` with the same
 * plan next claims it and goes on from the cursor (a chunk seeded but not yet counted is found
 * as `exists`). Chunks are seeded in batches (`seedBatchItems`, default 2 000 items), one
 * transaction per shard store, the home store's moving the cursor with its seeds. While a batch
 * is seeded the next one is read from the source, so the source and the store work at once;
 * batches are still seeded one after another, in order. Memory is two batches' items, whatever
 * the size of the source.
 */
import { encode as defaultEncode } from './codec.js';
import { FanOutPlanMismatchError, InvalidInputError } from './errors.js';
import { INITIAL_WRITE_EPOCH } from './fan-out-rules.js';
import {
  type ChunkSeed,
  type FanOutPlan,
  type FanOutRecord,
  type FanOutStore,
  MAX_SEED_BATCH,
  type SeedChunksResult,
  type SeedCursor,
} from './fan-out-store.js';
import { type AnyTask, parseTaskInput } from './task.js';

/** The items of a fan-out: a page of at most `limit` items from index `from`, stable by index; fewer than `limit` ends it. */
export type FanOutSource = (from: number, limit: number) => Promise<readonly unknown[]> | readonly unknown[];

/** Options of {@link createFanOut}. */
export interface CreateFanOutOptions {
  /** The execution's store: the fan-out row, the placements and the dispatch messages. */
  home: FanOutStore;
  /** The store of each shard of the plan, by shard name. */
  shards: Readonly<Record<string, FanOutStore>>;
  plan: FanOutPlan;
  /** The task; every item must pass its input schema. */
  task: AnyTask;
  items: FanOutSource;
  /** Names this creator in the creation lease. */
  owner: string;
  /** The creation lease's length; renewed every third of it (default: 30 000). */
  leaseMs?: number;
  /** Chunks per shard dispatched at once (default: all). */
  window?: number;
  /** Milliseconds since the epoch (default: `Date.now`). */
  clock?: () => number;
  /** How long to wait before looking again while another creator holds the lease (default: a third of `leaseMs`). */
  waitMs?: number;
  /** Encodes an item for the store (default: the codec). */
  encode?: (value: unknown) => string;
  /** Items seeded per store transaction, in whole chunks (default: 2 000, at least one chunk). */
  seedBatchItems?: number;
}

/**
 * The longest stretch of creation work between two turns of the event loop, in ms. A
 * synchronous source over a synchronous store (SQLite) never awaits anything that is not
 * already settled, so without a turn no timer would run until the whole plan is seeded: the
 * process's execution leases and chunk leases would go unrenewed meanwhile.
 */
const TURN_EVERY_MS = 5;

/** Let timers and I/O run once (`setImmediate` where there is one: no 1 ms clamp). */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => {
    if (typeof setImmediate === 'function') setImmediate(resolve);
    else setTimeout(resolve, 0);
  });
}

/** Items seeded per store transaction unless {@link CreateFanOutOptions.seedBatchItems} says otherwise. */
export const DEFAULT_SEED_BATCH_ITEMS = 2_000;

/**
 * Create (or finish creating, or find) the fan-out of `plan`; resolves with its row once it is
 * dispatched, settled or failed. A plan or a chunk that does not match the stored one fails
 * the fan-out and rejects with `FanOutPlanMismatchError`; an item that fails the task's input
 * schema fails it and rejects with `InvalidInputError`; nothing is dispatched in either case.
 * @example
 * const row = await createFanOut({ home: stores.fanOuts, shards: { main: stores.fanOuts }, plan, task: score,
 *   items: (from, limit) => cases.slice(from, from + limit), owner: 'node-1' });
 */
export async function createFanOut(options: CreateFanOutOptions): Promise<FanOutRecord> {
  const clock = options.clock ?? Date.now;
  const leaseMs = options.leaseMs ?? 30_000;
  const batch = options.seedBatchItems;
  if (batch !== undefined && !(Number.isSafeInteger(batch) && batch >= 1))
    throw new InvalidInputError('createFanOut options', [
      { path: 'seedBatchItems', message: `must be an integer >= 1, got ${String(batch)}` },
    ]);
  const { home, plan } = options;
  for (;;) {
    const created = await home.create(plan, { owner: options.owner, now: clock(), ttlMs: leaseMs });
    if (created.outcome === 'mismatch')
      throw new FanOutPlanMismatchError(plan.fanOutId, created.mismatch ?? '');
    if (created.outcome === 'done') return created.fanOut;
    if (created.outcome === 'held') {
      await sleep(options.waitMs ?? Math.max(1, Math.floor(leaseMs / 3)));
      continue;
    }
    const dispatched = await seedAndDispatch(options, created.fanOut, created.token!, clock, leaseMs);
    if (dispatched) return (await home.get(plan.fanOutId))!;
    // The lease was lost to another creator: wait for it, or take it back when it lapses.
  }
}

/** Seed from the cursor on and dispatch; false when the lease was lost on the way. */
async function seedAndDispatch(
  options: CreateFanOutOptions,
  row: FanOutRecord,
  token: string,
  clock: () => number,
  leaseMs: number,
): Promise<boolean> {
  const { home, plan } = options;
  const perBatch = seedBatchChunks(plan.chunkSize, options.seedBatchItems);
  let chunkId = row.seededChunks;
  let seededItems = row.seededItems;
  let renewedAt = clock();
  let turnedAt = performance.now();
  // The batch being seeded while the next one is read: batches are seeded one after another,
  // in order, so the cursor moves as before; only the reading of the source runs ahead.
  let seeding: Promise<SeedOutcome> | undefined;
  for (let ended = false; !ended; ) {
    const seeds: ChunkSeed[] = [];
    while (seeds.length < perBatch) {
      // Between pages: give the event loop a turn once every TURN_EVERY_MS of work.
      if (performance.now() - turnedAt >= TURN_EVERY_MS) {
        await nextTurn();
        turnedAt = performance.now();
      }
      const inputs = await readPage(options, chunkId + seeds.length, clock);
      if (inputs.length > 0) seeds.push(seedOf(options, chunkId + seeds.length, inputs, clock()));
      if (inputs.length < plan.chunkSize) {
        ended = true;
        break;
      }
    }
    if (!(await seeded(seeding))) return false;
    seeding = undefined;
    if (seeds.length === 0) break;
    if (clock() - renewedAt >= leaseMs / 3) {
      if (!(await home.renewCreation(plan.fanOutId, token, clock(), leaseMs))) return false;
      renewedAt = clock();
    }
    chunkId += seeds.length;
    seededItems += seeds.reduce((sum, seed) => sum + seed.inputs.length, 0);
    seeding = outcomeOf(
      seedAll(options, seeds, { fanOutId: plan.fanOutId, token, seededChunks: chunkId, seededItems }),
    );
  }
  if (!(await seeded(seeding))) return false;
  const dispatchOptions = {
    total: seededItems,
    now: clock(),
    ...(options.window === undefined ? {} : { window: options.window }),
  };
  return home.dispatch(plan.fanOutId, token, dispatchOptions);
}

/** How a batch's seeding ended: its answer, or what it threw. */
type SeedOutcome = { ok: boolean } | { error: unknown };

/** A seeding's outcome, caught at once: it is awaited only after the next batch is read. */
function outcomeOf(seeding: Promise<boolean>): Promise<SeedOutcome> {
  return seeding.then(
    (ok) => ({ ok }),
    (error: unknown) => ({ error }),
  );
}

/** True when there was no seeding or it held the lease; what it threw is thrown here. */
async function seeded(seeding: Promise<SeedOutcome> | undefined): Promise<boolean> {
  if (seeding === undefined) return true;
  const outcome = await seeding;
  if ('error' in outcome) throw outcome.error;
  return outcome.ok;
}

/** Chunks per seed batch: `seedBatchItems` items' worth, at least one chunk, at most `MAX_SEED_BATCH`. */
function seedBatchChunks(chunkSize: number, items = DEFAULT_SEED_BATCH_ITEMS): number {
  return Math.min(MAX_SEED_BATCH, Math.max(1, Math.floor(items / chunkSize)));
}

/** Read and check the page of chunk `chunkId`; a malformed page fails the fan-out. */
async function readPage(
  options: CreateFanOutOptions,
  chunkId: number,
  clock: () => number,
): Promise<string[]> {
  const { home, plan } = options;
  const from = chunkId * plan.chunkSize;
  const page = await options.items(from, plan.chunkSize);
  if (!Array.isArray(page) || page.length > plan.chunkSize) {
    const message = `must be an array of at most ${plan.chunkSize} items, got ${describePage(page)}`;
    await home.fail(plan.fanOutId, `the item source ${message}`, clock());
    throw new InvalidInputError(`fan-out "${plan.fanOutId}" items`, [{ path: `items(${from})`, message }]);
  }
  return encodeAll(options, page, from, options.encode ?? defaultEncode, clock);
}

function seedOf(options: CreateFanOutOptions, chunkId: number, inputs: string[], now: number): ChunkSeed {
  const { plan } = options;
  const shard = plan.shards[chunkId % plan.shards.length]!;
  return {
    fanOutId: plan.fanOutId,
    shard,
    chunkId,
    storeAlias: shard,
    firstIndex: chunkId * plan.chunkSize,
    inputs,
    writeEpoch: INITIAL_WRITE_EPOCH,
    maxAttempts: plan.maxAttempts,
    now,
  };
}

/**
 * Seed a batch, one call per shard store; the home store's call (the last) moves the cursor in
 * its own transaction, else one `recordSeeded` does. A mismatch fails the fan-out; false when
 * the lease was lost.
 */
async function seedAll(
  options: CreateFanOutOptions,
  seeds: readonly ChunkSeed[],
  cursor: SeedCursor,
): Promise<boolean> {
  const { home, plan } = options;
  const byStore = new Map<FanOutStore, ChunkSeed[]>();
  for (const seed of seeds) {
    const store = options.shards[seed.shard];
    if (store === undefined)
      throw new InvalidInputError(`fan-out "${plan.fanOutId}"`, [
        { path: 'shards', message: `no store for shard "${seed.shard}"` },
      ]);
    byStore.set(store, [...(byStore.get(store) ?? []), seed]);
  }
  const homeSeeds = byStore.get(home);
  byStore.delete(home);
  for (const [store, batch] of byStore) await refuseMismatch(options, batch, await store.seedChunks(batch));
  if (homeSeeds === undefined)
    return home.recordSeeded(plan.fanOutId, cursor.token, cursor.seededChunks, cursor.seededItems);
  const seeded = await home.seedChunks(homeSeeds, cursor);
  await refuseMismatch(options, homeSeeds, seeded);
  return seeded.cursor === true;
}

async function refuseMismatch(
  options: CreateFanOutOptions,
  seeds: readonly ChunkSeed[],
  seeded: SeedChunksResult,
): Promise<void> {
  const at = seeded.outcomes.indexOf('mismatch');
  if (at < 0) return;
  const { chunkId, shard } = seeds[at]!;
  const mismatch = `chunk ${chunkId} on shard "${shard}" holds other items than the source gives now`;
  await options.home.fail(options.plan.fanOutId, `plan mismatch: ${mismatch}`, (options.clock ?? Date.now)());
  throw new FanOutPlanMismatchError(options.plan.fanOutId, mismatch);
}

/** Check every item of a page against the task's input schema and encode it; a bad one fails the fan-out. */
async function encodeAll(
  options: CreateFanOutOptions,
  page: readonly unknown[],
  from: number,
  encode: (value: unknown) => string,
  clock: () => number,
): Promise<string[]> {
  try {
    return page.map((item, i) => {
      parseTaskInput(options.task, item, from + i);
      return encode(item);
    });
  } catch (error) {
    await options.home.fail(
      options.plan.fanOutId,
      `an item was refused: ${(error as Error).message}`,
      clock(),
    );
    throw error;
  }
}

function describePage(page: unknown): string {
  return Array.isArray(page) ? `${page.length} items` : typeof page;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
