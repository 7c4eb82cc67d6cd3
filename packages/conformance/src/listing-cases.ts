/** The execution index: `getExecution`, `listExecutions` filters and cursor paging, statuses. */
import type { EventStore, EventType, ExecutionStatus } from '@skein/workflow-runtime';
import { type ListExecutionsQuery, statusAfter } from '@skein/workflow-runtime/spi';
import { expect, it } from 'vitest';
import { appendOf, draft, start } from './drafts.js';
import type { EventStoreSuiteOptions } from './event-store-suite.js';
import { rejectionOf, withStores } from './harness.js';

const WORKFLOWS = ['alpha', 'beta', 'gamma'];
const PATHS: EventType[][] = [
  [],
  ['STEP_STARTED'],
  ['EXECUTION_SUSPENDED'],
  ['STEP_STARTED', 'EXECUTION_COMPLETED'],
];

interface Row {
  executionId: string;
  workflow: string;
  status: ExecutionStatus;
}

/** Register the execution-index cases. */
export function listingCases({ open }: EventStoreSuiteOptions): void {
  it('listExecutions filters by status and workflow and pages by cursor with no duplicates and no misses', () =>
    withStores(open, async ({ events }) => {
      const rows = await populate(events, 23);
      await events.acquireFence('list-fence-only');
      const queries: ListExecutionsQuery[] = [
        {},
        { status: ['running'] },
        { status: ['pending', 'completed'] },
        { status: [] },
        { workflow: 'beta' },
        { workflow: 'alpha', status: ['suspended', 'running'] },
        { workflow: 'nobody' },
      ];
      for (const query of queries) {
        const expected = rows.filter((row) => matches(row, query)).map((row) => row.executionId);
        for (const limit of [1, 4, 100]) {
          expect(await collect(events, { ...query, limit }), JSON.stringify({ query, limit })).toEqual(
            expected,
          );
        }
      }
    }));

  it('listExecutions refuses a cursor no page returned with InvalidInputError naming query.cursor', () =>
    withStores(open, async ({ events }) => {
      await start(events, 'cursor-a');
      await start(events, 'cursor-b');
      // Not base64url, padded, percent-encoded, not the encoding of any text, a non-canonical
      // encoding: none is the encoding of an id, so none may silently restart the listing.
      for (const cursor of ['!!!', 'a b', 'Y3Vyc29y=', '%2F', '77-', 'AB']) {
        const refused = await rejectionOf(events.listExecutions({ cursor }));
        expect(refused.name, `cursor ${cursor}`).toBe('InvalidInputError');
        expect(refused.message).toMatch(/query\.cursor/);
      }
      const first = await events.listExecutions({ limit: 1 });
      const second = await events.listExecutions({ limit: 1, cursor: first.nextCursor! });
      expect([...first.items, ...second.items].map((item) => item.executionId)).toEqual([
        'cursor-a',
        'cursor-b',
      ]);
    }));

  it('listExecutions refuses a limit below 1 (or fractional) with InvalidInputError naming query.limit', () =>
    withStores(open, async ({ events }) => {
      await start(events, 'limit-row');
      for (const limit of [0, -1, 1.5]) {
        const refused = await rejectionOf(events.listExecutions({ limit }));
        expect(refused.name, `limit ${limit}`).toBe('InvalidInputError');
        expect(refused.message).toMatch(/query\.limit/);
      }
      expect((await events.listExecutions({ limit: 1 })).items.map((row) => row.executionId)).toEqual([
        'limit-row',
      ]);
    }));

  it('getExecution returns the index row once seq 0 exists', () =>
    withStores(open, async ({ events }) => {
      expect(await events.getExecution('row')).toBeNull();
      await start(events, 'row', { workflow: 'orders' });
      await events.append(
        appendOf('row', { seq: 1, workflow: 'ignored' }, [draft('STEP_STARTED', '{}', 1234)]),
      );
      expect(await events.getExecution('row')).toEqual({
        executionId: 'row',
        workflow: 'orders',
        status: 'running',
        sequence: 1,
        updatedAt: 1234,
      });
    }));

  it('the status index follows statusAfter after every append', () =>
    withStores(open, async ({ events }) => {
      const types: EventType[] = [
        'STEP_STARTED',
        'EXECUTION_SUSPENDED',
        'CANCEL_REQUESTED',
        'EXECUTION_RESUMED',
        'TIMER_FIRED',
        'CANCEL_REQUESTED',
        'EXECUTION_CANCELLED',
      ];
      await start(events, 'status');
      let expected = statusAfter(undefined, 'EXECUTION_STARTED');
      for (const [i, type] of types.entries()) {
        expected = statusAfter(expected, type);
        const result = await events.append(appendOf('status', { seq: i + 1 }, [draft(type)]));
        expect(result, type).toEqual({ lastSeq: i + 1, status: expected });
        expect(await events.getExecution('status'), type).toMatchObject({ status: expected });
        const listed = await events.listExecutions({ status: [expected] });
        expect(
          listed.items.map((item) => item.executionId),
          type,
        ).toEqual(['status']);
      }
    }));
}

/** Start `n` executions over three workflows and four statuses; returns them sorted by id. */
async function populate(events: EventStore, n: number): Promise<Row[]> {
  const rows: Row[] = [];
  for (let i = 0; i < n; i += 1) {
    const executionId = `list-${String(i).padStart(3, '0')}`;
    const workflow = WORKFLOWS[i % WORKFLOWS.length]!;
    await start(events, executionId, { workflow });
    const path = PATHS[i % PATHS.length]!;
    let status: ExecutionStatus = 'pending';
    if (path.length > 0) {
      const result = await events.append(
        appendOf(
          executionId,
          { seq: 1 },
          path.map((type) => draft(type)),
        ),
      );
      status = result.status;
    }
    rows.push({ executionId, workflow, status });
  }
  return rows;
}

function matches(row: Row, query: ListExecutionsQuery): boolean {
  return (
    (query.status === undefined || query.status.includes(row.status)) &&
    (query.workflow === undefined || query.workflow === row.workflow)
  );
}

/** Walk every page; checks page shape on the way and returns the ids in order. */
async function collect(events: EventStore, query: ListExecutionsQuery): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 1000; pages += 1) {
    const page = await events.listExecutions({ ...query, ...(cursor === undefined ? {} : { cursor }) });
    if (page.nextCursor !== undefined) expect(page.items).toHaveLength(query.limit!);
    if (pages > 0) expect(page.items.length).toBeGreaterThan(0);
    ids.push(...page.items.map((item) => item.executionId));
    cursor = page.nextCursor;
    if (cursor === undefined) return ids;
  }
  throw new Error('listExecutions never returned a last page');
}
