/**
 * What the runtime holds for fan-outs: the shard stores (`createRuntime({ shards })`, checked
 * before anything runs) and `runtime.fanOutResults`, every result of a fan-out in index order.
 */
import type { Codec } from './codec.js';
import { InvalidInputError } from './errors.js';
import { type FanOutCallDeps, HOME_SHARD } from './fan-out-call.js';
import { itemsInOrder } from './fan-out-settlement.js';
import type { FanOutStore, ItemStatus } from './fan-out-store.js';
import type { Stores } from './spi.js';

/** One result of `runtime.fanOutResults`. */
export interface FanOutResult {
  index: number;
  status: ItemStatus;
  /** The decoded output of a succeeded item. */
  output?: unknown;
  /** Why a failed (or unfinished) item has no output. */
  error?: string;
  /** The attempts started for it. */
  attempt: number;
}

/** The fan-out stores of a runtime by shard name: its own as `HOME_SHARD`, then `shards`. Throws `InvalidInputError` on a bad map. */
export function fanOutShardsOf(
  stores: Stores,
  shards: Readonly<Record<string, Pick<Stores, 'fanOuts'>>> | undefined,
): Readonly<Record<string, FanOutStore | undefined>> {
  const issues: { path: string; message: string }[] = [];
  const map: Record<string, FanOutStore | undefined> = { [HOME_SHARD]: stores.fanOuts };
  for (const [name, shard] of Object.entries(shards ?? {})) {
    if (name === HOME_SHARD)
      issues.push({
        path: `shards.${name}`,
        message: `"${HOME_SHARD}" is the runtime's own store; name the shard otherwise`,
      });
    else if (shard?.fanOuts === undefined)
      issues.push({ path: `shards.${name}`, message: 'has no fan-out tables (stores.fanOuts)' });
    else map[name] = shard.fanOuts;
  }
  if (issues.length > 0) throw new InvalidInputError('createRuntime options', issues);
  return Object.freeze(map);
}

/** The deps `ctx.fanOut` runs with. */
export function fanOutDepsOf(
  shards: Readonly<Record<string, FanOutStore | undefined>>,
  owner: string,
  clock: () => number,
): FanOutCallDeps {
  return { home: shards[HOME_SHARD], shards, owner, clock };
}

/**
 * Every result of fan-out `fanOutId` of this runtime's store, in index order, a page per shard
 * at a time. Throws `InvalidInputError` when the runtime has no fan-out tables, or no such
 * fan-out, or a shard of it is not one of the runtime's.
 */
export async function* fanOutResultsOf(
  shards: Readonly<Record<string, FanOutStore | undefined>>,
  codec: Codec,
  fanOutId: string,
  pageSize = 1_000,
): AsyncGenerator<FanOutResult> {
  const where = `fanOutResults("${fanOutId}")`;
  const home = shards[HOME_SHARD];
  if (home === undefined)
    throw new InvalidInputError(where, [{ path: 'stores', message: 'the runtime has no fan-out tables' }]);
  const row = await home.get(fanOutId);
  if (row === null)
    throw new InvalidInputError(where, [
      { path: 'fanOutId', message: 'no such fan-out in this runtime\u2019s store' },
    ]);
  const stores: Record<string, FanOutStore> = {};
  for (const shard of row.shards) {
    const store = shards[shard];
    if (store === undefined)
      throw new InvalidInputError(where, [
        { path: 'shards', message: `shard "${shard}" is not one of this runtime's` },
      ]);
    stores[shard] = store;
  }
  for await (const item of itemsInOrder(fanOutId, stores, pageSize)) {
    const result: FanOutResult = { index: item.index, status: item.status, attempt: item.attempt };
    if (item.status === 'succeeded') result.output = codec.decode(item.output ?? 'null');
    else if (item.error !== null) result.error = item.error;
    yield result;
  }
}
