/**
 * The reads behind `skein list`, `show`, `history`, `dead-letters` and the inspector's views.
 * They need no workflow code: everything comes from the execution index and the log.
 */
import {
  type Envelope,
  type ExecutionListItem,
  ExecutionNotFoundError,
  type ExecutionState,
  type ExecutionStatus,
  loadState,
  readHistory,
  type Stores,
} from '@skein/workflow-runtime';
import {
  listExecutions,
  standingBlockage,
  toEnvelope,
  WorkflowRegistry,
} from '@skein/workflow-runtime/internal';
import { buildTimeline, errorText, type Timeline } from './timeline.js';

/** A filter and page of executions. */
export interface ListFilter {
  status?: readonly ExecutionStatus[];
  workflow?: string;
  /** Only blocked executions (adr/0058), each with `blocked`. */
  blocked?: boolean;
  limit?: number;
  cursor?: string;
}

/** A page of executions. */
export interface ExecutionsPage {
  items: ExecutionListItem[];
  nextCursor?: string;
}

const NO_WORKFLOWS = new WorkflowRegistry([]);

/** A page of the execution index, validated like `runtime.list` (limit 1 to 1000). */
export async function listPage(stores: Stores, filter: ListFilter): Promise<ExecutionsPage> {
  return listExecutions(
    stores.events,
    NO_WORKFLOWS,
    {
      ...(filter.status === undefined || filter.status.length === 0 ? {} : { status: [...filter.status] }),
      ...(filter.workflow === undefined ? {} : { workflow: filter.workflow }),
      ...(filter.blocked === true ? { blocked: true } : {}),
      limit: filter.limit ?? 50,
      ...(filter.cursor === undefined ? {} : { cursor: filter.cursor }),
      versions: true,
    },
    stores.blockages,
  );
}

/** One execution: its folded state, its log and the timeline built from it. */
export interface ExecutionDetail {
  state: ExecutionState;
  history: Envelope[];
  timeline: Timeline;
  /** Ids of the children its log started. */
  children: string[];
}

/** Everything `show` and the timeline view need; `ExecutionNotFoundError` when there is no such id. */
export async function executionDetail(stores: Stores, executionId: string): Promise<ExecutionDetail> {
  const folded = await loadState(stores, executionId);
  if (folded === null) throw new ExecutionNotFoundError(executionId);
  const blocked = await standingBlockage(stores.blockages, folded);
  const state = blocked === undefined ? folded : { ...folded, blocked };
  const history = await readHistory(stores.events, executionId);
  const children = history.flatMap((e) =>
    e.type === 'CHILD_STARTED' ? [String((e.payload as { childId: unknown }).childId)] : [],
  );
  return { state, history, timeline: buildTimeline(history), children };
}

/** A dead-lettered execution and why. */
export interface DeadLetter {
  executionId: string;
  workflow: string;
  sequence: number;
  deadLetteredAt: number;
  reason: string;
}

/** A page of dead-lettered executions with the reason their last event records. */
export async function deadLetters(
  stores: Stores,
  filter: Omit<ListFilter, 'status'>,
): Promise<{ items: DeadLetter[]; nextCursor?: string }> {
  const page = await listPage(stores, { ...filter, status: ['dead_lettered'] });
  const items = await Promise.all(
    page.items.map(async (item): Promise<DeadLetter> => {
      const [last] = await stores.events.read(item.executionId, item.sequence, 1);
      const payload =
        last === undefined ? {} : (toEnvelope(last).payload as { reason?: unknown; error?: unknown });
      const reason =
        typeof payload.reason === 'string'
          ? payload.reason
          : payload.error === undefined
            ? ''
            : errorText(payload.error);
      return {
        executionId: item.executionId,
        workflow: item.workflow,
        sequence: item.sequence,
        deadLetteredAt: item.updatedAt,
        reason,
      };
    }),
  );
  return page.nextCursor === undefined ? { items } : { items, nextCursor: page.nextCursor };
}
