/**
 * Settling a fan-out (F6, F7; docs/fan-out.md#settlement): once every chunk on every shard is
 * terminal, read the results in index order (a page per shard at a time, merged), count them,
 * and fold the aggregate only when every required item succeeded. A missing or failed
 * required item gives `status: 'errored'` with the reasons and no aggregate, never a partial
 * score. Memory is one page per shard, whatever the number of items.
 */
import { decode as defaultDecode } from './codec.js';
import { chunkCount, type FanOutStore, type ItemRecord } from './fan-out-store.js';

/** How results fold into one value: `init` once, then `add` per succeeded item, in index order. */
export interface FanOutAggregate<R, A> {
  init: () => A;
  add: (accumulator: A, result: R, index: number) => A;
}

/** One item that did not succeed, and why. */
export interface FanOutItemError {
  index: number;
  error: string;
}

/** What a settled fan-out came to. */
export interface FanOutSummary<A = unknown> {
  fanOutId: string;
  total: number;
  succeeded: number;
  failed: number;
  status: 'complete' | 'errored';
  /** Present only when `complete` and an aggregate was given. */
  aggregate?: A;
  /** The first failures (at most `MAX_SUMMARY_ERRORS`), in index order. */
  errors: FanOutItemError[];
}

/** Most failures a summary lists. */
export const MAX_SUMMARY_ERRORS = 100;

/** Options of {@link summarizeFanOut}. */
export interface SummarizeOptions<R, A> {
  fanOutId: string;
  /** The store of each shard of the plan, by shard name. */
  shards: Readonly<Record<string, FanOutStore>>;
  /** Every item must succeed (F7). */
  required: boolean;
  /** The plan's item count. */
  total: number;
  aggregate?: FanOutAggregate<R, A>;
  /** Decodes a stored output (default: the codec). */
  decode?: (text: string) => unknown;
  /** Items read per shard per page (default: 1 000). */
  pageSize?: number;
}

/**
 * True when every chunk of a plan of `total` items in chunks of `chunkSize` is done or failed
 * in the shard stores (chunks are counted, not items, so a check costs a row per chunk).
 */
export async function fanOutSettled(
  fanOutId: string,
  shards: Readonly<Record<string, FanOutStore>>,
  total: number,
  chunkSize: number,
): Promise<boolean> {
  let terminal = 0;
  for (const store of distinct(shards)) {
    const counts = await store.chunkCounts(fanOutId);
    if (counts.open > 0 || counts.leased > 0) return false;
    terminal += counts.done + counts.failed;
  }
  return terminal === chunkCount(total, chunkSize);
}

/** Read every result in index order and summarize (see the module comment). */
export async function summarizeFanOut<R, A>(options: SummarizeOptions<R, A>): Promise<FanOutSummary<A>> {
  const decode = options.decode ?? defaultDecode;
  const summary: FanOutSummary<A> = {
    fanOutId: options.fanOutId,
    total: options.total,
    succeeded: 0,
    failed: 0,
    status: 'complete',
    errors: [],
  };
  let accumulator = options.aggregate?.init();
  let expected = 0;
  const missing = (upTo: number) => {
    for (; expected < upTo; expected += 1)
      noteError(summary, { index: expected, error: 'no result: the item is missing' });
  };
  for await (const item of itemsInOrder(options.fanOutId, options.shards, options.pageSize ?? 1_000)) {
    missing(item.index);
    expected = item.index + 1;
    if (item.status === 'succeeded') {
      summary.succeeded += 1;
      // A required fan-out that already has a failure gets no aggregate: stop folding.
      if (options.aggregate !== undefined && (!options.required || summary.status === 'complete'))
        accumulator = options.aggregate.add(accumulator as A, decode(item.output ?? 'null') as R, item.index);
    } else {
      summary.failed += item.status === 'failed' ? 1 : 0;
      noteError(summary, { index: item.index, error: item.error ?? `no result: the item is ${item.status}` });
    }
  }
  missing(options.total);
  if (!options.required) summary.status = 'complete';
  if (summary.status === 'complete' && options.aggregate !== undefined) summary.aggregate = accumulator as A;
  return summary;
}

/** Every item of a fan-out over its shard stores, in index order: a k-way merge of per-store pages. */
export async function* itemsInOrder(
  fanOutId: string,
  shards: Readonly<Record<string, FanOutStore>>,
  pageSize = 1_000,
): AsyncGenerator<ItemRecord> {
  const cursors = distinct(shards).map((store) => ({
    store,
    page: [] as ItemRecord[],
    at: 0,
    after: -1,
    done: false,
  }));
  const fill = async (cursor: (typeof cursors)[number]) => {
    if (cursor.at < cursor.page.length || cursor.done) return;
    cursor.page = await cursor.store.items(fanOutId, { afterIndex: cursor.after, limit: pageSize });
    cursor.at = 0;
    cursor.done = cursor.page.length === 0;
  };
  for (;;) {
    let next: (typeof cursors)[number] | undefined;
    for (const cursor of cursors) {
      await fill(cursor);
      const head = cursor.page[cursor.at];
      if (head !== undefined && (next === undefined || head.index < next.page[next.at]!.index)) next = cursor;
    }
    if (next === undefined) return;
    const item = next.page[next.at]!;
    next.at += 1;
    next.after = item.index;
    yield item;
  }
}

function noteError(summary: FanOutSummary<unknown>, error: FanOutItemError): void {
  summary.status = 'errored';
  if (summary.errors.length < MAX_SUMMARY_ERRORS) summary.errors.push(error);
}

/** The distinct stores of a shard map (two shards may share one store). */
function distinct(shards: Readonly<Record<string, FanOutStore>>): FanOutStore[] {
  return [...new Set(Object.values(shards))];
}
