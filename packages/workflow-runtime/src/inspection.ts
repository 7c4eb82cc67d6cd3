/**
 * `runtime.list`: a page of execution summaries over the store's execution index (one indexed
 * range read per page, whatever the number of executions), with the query validated first.
 * With `versions: true` each item also says which version it is pinned to and whether this
 * runtime can run it, so executions left pending for another node's code are visible.
 */
import { z } from 'zod';
import { blockageStands, blockedView, type ExecutionBlocked } from './blockage.js';
import { decode } from './codec.js';
import { decodeCursor, encodeCursor } from './cursor.js';
import { type ExecutionStatus, ExecutionStatuses, type StartedPayload } from './events.js';
import { nameSchema, wellFormed } from './ids.js';
import type { BlockageStore, EventStore, ExecutionSummary } from './spi.js';
import { parseWith, type WorkflowRegistry } from './workflow.js';

/** Query of `runtime.list`. */
export interface ListQuery {
  /** Only executions in this status or these statuses (default: all). */
  status?: ExecutionStatus | readonly ExecutionStatus[];
  /** Only executions of this workflow (default: all). */
  workflow?: string;
  /** Page size, 1 to 1000 (default: 100). */
  limit?: number;
  /** `nextCursor` of the previous page (default: the first page). */
  cursor?: string;
  /**
   * Read each item's seq 0 to add `version` and `registered` (one extra read per item;
   * default: false).
   */
  versions?: boolean;
  /**
   * Only executions whose log cannot be continued (adr/0058), each with `blocked` (default:
   * every execution). Pages walk the blockages, not the execution index.
   */
  blocked?: true;
}

/** One execution in a page of `runtime.list`. */
export interface ExecutionListItem extends ExecutionSummary {
  /** Version the execution is pinned to (only with `versions: true`). */
  version?: number;
  /** Whether this runtime has that workflow version registered (only with `versions: true`). */
  registered?: boolean;
  /** Why its log cannot be continued (only with `blocked: true`). */
  blocked?: ExecutionBlocked;
}

/** A page of `runtime.list`. */
export interface ListPage {
  items: ExecutionListItem[];
  /** Pass as `cursor` for the next page; absent on the last page. */
  nextCursor?: string;
}

const statusSchema = z.enum(ExecutionStatuses as [ExecutionStatus, ...ExecutionStatus[]]);

const querySchema = z.object({
  status: z.union([statusSchema, z.array(statusSchema)]).optional(),
  workflow: nameSchema.optional(),
  limit: z.number().int().min(1).max(1000).optional(),
  cursor: wellFormed(z.string().min(1)).optional(),
  versions: z.boolean().optional(),
  blocked: z.literal(true).optional(),
});

/** See the module comment. */
export async function listExecutions(
  events: EventStore,
  registry: WorkflowRegistry,
  query: ListQuery = {},
  blockages?: BlockageStore,
): Promise<ListPage> {
  const q = parseWith(querySchema, query, 'list query', 'query');
  const status = q.status === undefined ? undefined : Array.isArray(q.status) ? q.status : [q.status];
  const page =
    q.blocked === true
      ? await listBlocked(events, blockages, { ...q, status })
      : await events.listExecutions({
          ...(status === undefined ? {} : { status }),
          ...(q.workflow === undefined ? {} : { workflow: q.workflow }),
          limit: q.limit ?? 100,
          ...(q.cursor === undefined ? {} : { cursor: q.cursor }),
        });
  if (q.versions !== true) return page;
  const items = await Promise.all(page.items.map((item) => withVersion(events, registry, item)));
  return page.nextCursor === undefined ? { items } : { items, nextCursor: page.nextCursor };
}

/**
 * A page of blocked executions: the blockage rows after the cursor, in id order, kept when
 * their blockage stands and they match the filters. Without a blockage store, none.
 */
async function listBlocked(
  events: EventStore,
  blockages: BlockageStore | undefined,
  q: { status?: readonly ExecutionStatus[]; workflow?: string; limit?: number; cursor?: string },
): Promise<ListPage> {
  const limit = q.limit ?? 100;
  const items: ExecutionListItem[] = [];
  let after = q.cursor === undefined ? undefined : decodeCursor(q.cursor);
  while (blockages !== undefined && items.length < limit) {
    const rows = await blockages.list({ ...(after === undefined ? {} : { after }), limit });
    for (const row of rows) {
      after = row.executionId;
      const summary = await events.getExecution(row.executionId);
      if (summary === null || (q.workflow !== undefined && summary.workflow !== q.workflow)) continue;
      if (q.status !== undefined && !q.status.includes(summary.status)) continue;
      if (blockageStands(row, summary)) items.push({ ...summary, blocked: blockedView(row) });
      if (items.length === limit) return { items, nextCursor: encodeCursor(after) };
    }
    if (rows.length < limit) break;
  }
  return { items };
}

async function withVersion(
  events: EventStore,
  registry: WorkflowRegistry,
  item: ExecutionSummary,
): Promise<ExecutionListItem> {
  const [first] = await events.read(item.executionId, 0, 1);
  if (first === undefined) return item;
  const { version } = decode<StartedPayload>(first.payload);
  return { ...item, version, registered: registry.has(item.workflow, version) };
}
