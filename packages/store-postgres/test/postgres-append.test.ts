/**
 * The append on PostgreSQL: one statement per append, refusals that match `checkAppend`, and
 * races between separate pools (as separate processes would race) decided by the database.
 */
import {
  NulInTextError,
  openPostgresStores,
  type PostgresStores,
  WAKEUP_PENDING,
} from '@skein/store-postgres';
import {
  DuplicateEnvelopeIdError,
  DuplicateSequenceError,
  type EventType,
  ExecutionAlreadyExistsError,
  ExecutionTerminatedError,
  InvalidAppendError,
  StaleFenceError,
} from '@skein/workflow-runtime';
import type { AppendRequest } from '@skein/workflow-runtime/spi';
import pg from 'pg';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { adminQuery, dropSchema, freshSchema, PG_URL, whenPostgres } from './support/pg.js';

let n = 0;
function request(
  executionId: string,
  seq: number,
  fence: number,
  types: EventType[],
  workflow = 'wf',
): AppendRequest {
  return {
    executionId,
    workflow,
    expectedSeq: seq,
    fence,
    events: types.map((type) => {
      n += 1;
      return {
        envelopeId: `append-test-${process.pid}-${n}`,
        type,
        payload: `{"n":${n}}`,
        recordedAt: 1000 + n,
      };
    }),
  };
}

/** Several stores (pools) on one fresh schema, as several processes would open it. */
async function nodes(count: number, poolSize = 4): Promise<PostgresStores[]> {
  const schema = freshSchema();
  const opened = await Promise.all(
    Array.from({ length: count }, () => openPostgresStores({ url: PG_URL, schema, poolSize })),
  );
  cleanups.push(async () => {
    await Promise.all(opened.map((stores) => stores.close()));
    await dropSchema(schema);
  });
  return opened;
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((cleanup) => cleanup()));
  vi.restoreAllMocks();
});

whenPostgres(() => {
  describe('postgres append', () => {
    it('an append is one round trip: one statement starts, one writes each step, one ends', async () => {
      const [stores] = await nodes(1);
      const { events } = stores!;
      const queries = vi.spyOn(pg.Client.prototype, 'query');
      await events.append(request('one-trip', 0, 0, ['EXECUTION_STARTED', 'STEP_STARTED']));
      expect(queries).toHaveBeenCalledTimes(1);
      await events.append(request('one-trip', 2, 0, ['STEP_COMPLETED', 'STEP_STARTED']));
      await events.append(request('one-trip', 4, 0, ['STEP_COMPLETED', 'STEP_STARTED', 'STEP_COMPLETED']));
      expect(queries).toHaveBeenCalledTimes(3);
      await events.append(request('one-trip', 7, 0, ['EXECUTION_COMPLETED']));
      expect(queries).toHaveBeenCalledTimes(4);
      queries.mockRestore();
      expect((await events.read('one-trip')).map((event) => event.seq)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
      expect(await events.getExecution('one-trip')).toMatchObject({ status: 'completed', sequence: 7 });
    });

    it('a refused step append writes nothing and the full statement names the refusal', async () => {
      const [stores] = await nodes(1);
      const { events } = stores!;
      await events.append(request('refused', 0, 0, ['EXECUTION_STARTED', 'STEP_STARTED']));
      const fence = await events.acquireFence('refused');
      await events.append(request('refused', 2, fence, ['STEP_COMPLETED', 'STEP_STARTED']));
      const queries = vi.spyOn(pg.Client.prototype, 'query');
      await expect(events.append(request('refused', 4, 0, ['STEP_COMPLETED']))).rejects.toBeInstanceOf(
        StaleFenceError,
      );
      expect(queries).toHaveBeenCalledTimes(2);
      queries.mockRestore();
      expect((await events.read('refused')).map((event) => event.seq)).toEqual([0, 1, 2, 3]);
    });

    it('a status move from a fenced-out writer writes nothing, and the full statement names the refusal', async () => {
      const [a, b] = await nodes(2);
      await a!.events.append(request('move', 0, 0, ['EXECUTION_STARTED', 'STEP_STARTED']));
      const fence = await b!.events.acquireFence('move');
      const queries = vi.spyOn(pg.Client.prototype, 'query');
      const refused = a!.events.append(request('move', 2, 0, ['STEP_COMPLETED', 'EXECUTION_COMPLETED']));
      await expect(refused).rejects.toMatchObject({ fence: 0, current: fence });
      await expect(refused).rejects.toBeInstanceOf(StaleFenceError);
      expect(queries).toHaveBeenCalledTimes(2);
      queries.mockRestore();
      expect(await b!.events.getExecution('move')).toMatchObject({ status: 'running', sequence: 1 });
      await b!.events.append(request('move', 2, fence, ['STEP_COMPLETED', 'EXECUTION_COMPLETED']));
      expect(await a!.events.getExecution('move')).toMatchObject({ status: 'completed', sequence: 3 });
    });

    it('a step append at a seq another pool took meanwhile writes nothing and is refused as a duplicate', async () => {
      const [a, b] = await nodes(2);
      await a!.events.append(request('taken', 0, 0, ['EXECUTION_STARTED', 'STEP_STARTED']));
      await b!.events.append(request('taken', 2, 0, ['STEP_COMPLETED']));
      const queries = vi.spyOn(pg.Client.prototype, 'query');
      const refused = a!.events.append(request('taken', 2, 0, ['STEP_COMPLETED', 'STEP_STARTED']));
      await expect(refused).rejects.toBeInstanceOf(DuplicateSequenceError);
      expect(queries).toHaveBeenCalledTimes(2); // the step append meets the primary key; the full one says why
      queries.mockRestore();
      expect((await a!.events.read('taken')).map((event) => event.type)).toEqual([
        'EXECUTION_STARTED',
        'STEP_STARTED',
        'STEP_COMPLETED',
      ]);
    });

    it('a step append whose status hint is stale (another pool moved the status) still moves it right', async () => {
      const [a, b] = await nodes(2);
      await a!.events.append(request('hint', 0, 0, ['EXECUTION_STARTED', 'STEP_STARTED']));
      await a!.events.append(request('hint', 2, 0, ['STEP_COMPLETED', 'STEP_STARTED']));
      // Pool b suspends the execution behind pool a's back; a still remembers 'running'.
      await b!.events.append(request('hint', 4, 0, ['STEP_COMPLETED', 'EXECUTION_SUSPENDED']));
      expect(await a!.events.getExecution('hint')).toMatchObject({ status: 'suspended', sequence: 5 });
      await a!.events.append(request('hint', 6, 0, ['EXECUTION_RESUMED', 'STEP_STARTED']));
      expect(await b!.events.getExecution('hint')).toMatchObject({ status: 'running', sequence: 7 });
      const running = await b!.events.listExecutions({ status: ['running'] });
      expect(running.items.map((item) => item.executionId)).toEqual(['hint']);
      await b!.events.append(request('hint', 8, 0, ['EXECUTION_COMPLETED']));
      await expect(a!.events.append(request('hint', 9, 0, ['STEP_STARTED']))).rejects.toBeInstanceOf(
        ExecutionTerminatedError,
      );
      expect(await a!.events.read('hint')).toHaveLength(9);
    });

    it('a summary read leaves a hint: the takeover it comes before takes the short move, a stale one the full statement', async () => {
      const [a, b] = await nodes(2);
      await a!.events.append(request('read-hint', 0, 0, ['EXECUTION_STARTED']));
      expect(await b!.events.getExecution('read-hint')).toMatchObject({ status: 'pending', sequence: 0 });
      const fence = await b!.events.acquireFence('read-hint');
      const queries = vi.spyOn(pg.Client.prototype, 'query');
      await b!.events.append(request('read-hint', 1, fence, ['EXECUTION_RECOVERED', 'STEP_STARTED']));
      const names = queries.mock.calls.map(([query]) => (query as { name?: string }).name);
      queries.mockRestore();
      expect(names).toEqual(['skein_append_move_2']);
      expect(await a!.events.getExecution('read-hint')).toMatchObject({ status: 'running', sequence: 2 });
      // a read seq 2 and status running; b moves on. a's appends at its hint fail in the database, as they must.
      await b!.events.append(request('read-hint', 3, fence, ['STEP_COMPLETED', 'EXECUTION_SUSPENDED']));
      await expect(
        a!.events.append(request('read-hint', 3, fence, ['STEP_COMPLETED'])),
      ).rejects.toBeInstanceOf(DuplicateSequenceError);
      expect(await a!.events.getExecution('read-hint')).toMatchObject({ status: 'suspended', sequence: 4 });
      await expect(
        a!.events.append(request('read-hint', 5, fence - 1, ['EXECUTION_RESUMED'])),
      ).rejects.toBeInstanceOf(StaleFenceError);
      expect((await b!.events.read('read-hint')).map((event) => event.type)).toEqual([
        'EXECUTION_STARTED',
        'EXECUTION_RECOVERED',
        'STEP_STARTED',
        'STEP_COMPLETED',
        'EXECUTION_SUSPENDED',
      ]);
    });

    // A start that leaves the execution pending takes the full statement (it notifies); one that
    // leaves it running takes the short start statement. Both race the same way.
    const starts: [string, EventType[]][] = [
      ['pending', ['EXECUTION_STARTED']],
      ['running', ['EXECUTION_STARTED', 'STEP_STARTED']],
    ];

    it.each(starts)(
      'L2: of %s starts racing from three separate pools, exactly one wins; the others get ExecutionAlreadyExistsError naming its workflow',
      async (shape, types) => {
        const stores = await nodes(3);
        for (let round = 0; round < 5; round += 1) {
          const id = `pool-race-${shape}-${round}`;
          const racers = stores.flatMap((node, i) =>
            [0, 1, 2].map((j) => node.events.append(request(id, 0, 0, types, `wf-${i}-${j}`))),
          );
          const settled = await Promise.allSettled(racers);
          const won = settled.filter((result) => result.status === 'fulfilled');
          expect(won).toHaveLength(1);
          const summary = await stores[0]!.events.getExecution(id);
          for (const result of settled) {
            if (result.status === 'rejected') {
              expect(result.reason).toBeInstanceOf(ExecutionAlreadyExistsError);
              expect(result.reason).toMatchObject({ executionId: id, existingWorkflow: summary!.workflow });
            }
          }
          expect(await stores[1]!.events.read(id)).toHaveLength(types.length);
        }
      },
    );

    it('L1: appends at one seq racing from separate pools: one wins, the others get DuplicateSequenceError', async () => {
      const stores = await nodes(3);
      await stores[0]!.events.append(request('seq-race', 0, 0, ['EXECUTION_STARTED']));
      const racers = stores.flatMap((node) =>
        [0, 1, 2].map(() =>
          node.events.append(request('seq-race', 1, 0, ['STEP_STARTED', 'STEP_COMPLETED'])),
        ),
      );
      const settled = await Promise.allSettled(racers);
      expect(settled.filter((result) => result.status === 'fulfilled')).toHaveLength(1);
      for (const result of settled) {
        if (result.status === 'rejected') expect(result.reason).toBeInstanceOf(DuplicateSequenceError);
      }
      expect((await stores[2]!.events.read('seq-race')).map((event) => event.seq)).toEqual([0, 1, 2]);
    });

    it.each(starts)(
      'L3: a %s start racing an acquireFence on another node for a new execution either writes seq 0 under the newest fence or is refused as stale',
      async (shape, types) => {
        const [a, b] = await nodes(2);
        for (let i = 0; i < 40; i += 1) {
          const id = `start-vs-fence-${shape}-${i}`;
          const [started, fence] = await Promise.allSettled([
            a!.events.append(request(id, 0, 0, types)),
            b!.events.acquireFence(id),
          ]);
          expect(fence).toMatchObject({ status: 'fulfilled', value: 1 });
          const log = await a!.events.read(id);
          if (started.status === 'fulfilled') {
            expect(log.map((event) => [event.seq, event.fence])).toEqual(types.map((_, seq) => [seq, 0]));
          } else {
            expect(started.reason).toBeInstanceOf(StaleFenceError);
            expect(started.reason).toMatchObject({ executionId: id, fence: 0, current: 1 });
            expect(log).toEqual([]);
          }
        }
      },
    );

    it('a start after an acquireFence (the head exists) is written under that fence, and refused under an older one', async () => {
      const [a, b] = await nodes(2);
      await b!.events.acquireFence('fenced-start');
      const current = await b!.events.acquireFence('fenced-start');
      const stale = await a!.events
        .append(request('fenced-start', 0, current - 1, ['EXECUTION_STARTED', 'STEP_STARTED']))
        .catch((e: unknown) => e);
      expect(stale).toBeInstanceOf(StaleFenceError);
      expect(await a!.events.read('fenced-start')).toEqual([]);
      await a!.events.append(request('fenced-start', 0, current, ['EXECUTION_STARTED', 'STEP_STARTED']));
      expect((await b!.events.read('fenced-start')).map((event) => [event.seq, event.fence])).toEqual([
        [0, current],
        [1, current],
      ]);
      expect(await b!.events.getExecution('fenced-start')).toMatchObject({
        status: 'running',
        workflow: 'wf',
      });
    });

    it('L3: a fence taken on another node fences this node out, and nothing is written', async () => {
      const [a, b] = await nodes(2);
      const mine = await a!.events.acquireFence('fenced');
      await a!.events.append(request('fenced', 0, mine, ['EXECUTION_STARTED']));
      const theirs = await b!.events.acquireFence('fenced');
      const error = await a!.events
        .append(request('fenced', 1, mine, ['STEP_STARTED']))
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(StaleFenceError);
      expect(error).toMatchObject({ executionId: 'fenced', fence: mine, current: theirs });
      expect((await b!.events.read('fenced')).map((event) => event.type)).toEqual(['EXECUTION_STARTED']);
    });

    it('L7: U+0000 in an execution id or workflow is refused with NulInTextError before anything is sent', async () => {
      const [stores] = await nodes(1);
      const queries = vi.spyOn(pg.Client.prototype, 'query');
      await expect(
        stores!.events.append(request('nul\u0000id', 0, 0, ['EXECUTION_STARTED'])),
      ).rejects.toBeInstanceOf(NulInTextError);
      await expect(
        stores!.events.append(request('nul-wf', 0, 0, ['EXECUTION_STARTED'], 'w\u0000f')),
      ).rejects.toMatchObject({ name: 'NulInTextError', field: 'the workflow name' });
      await expect(stores!.events.acquireFence('nul\u0000id')).rejects.toBeInstanceOf(NulInTextError);
      await expect(
        stores!.events.append(request('bad-shape', 0, 0, ['STEP_STARTED'])),
      ).rejects.toBeInstanceOf(InvalidAppendError);
      expect(queries).not.toHaveBeenCalled();
      queries.mockRestore();
      expect(await stores!.events.read('nul\u0000id')).toEqual([]);
      expect(await stores!.events.getExecution('nul-wf')).toBeNull();
    });

    it('CANCEL_REQUESTED keeps the head status, in the same statement as the insert', async () => {
      const [stores] = await nodes(1);
      const { events } = stores!;
      await events.append(request('cancel', 0, 0, ['EXECUTION_STARTED']));
      await events.append(request('cancel', 1, 0, ['EXECUTION_SUSPENDED']));
      expect(await events.append(request('cancel', 2, 0, ['CANCEL_REQUESTED']))).toEqual({
        lastSeq: 2,
        status: 'suspended',
      });
      expect(await events.getExecution('cancel')).toMatchObject({ status: 'suspended', sequence: 2 });
    });

    describe('short appends grouped under load', () => {
      /** Start `count` executions on `events` and write each one's first step append. */
      async function started(
        events: PostgresStores['events'],
        prefix: string,
        count: number,
      ): Promise<string[]> {
        const ids = Array.from({ length: count }, (_, i) => `${prefix}-${i}`);
        await Promise.all(
          ids.map((id) => events.append(request(id, 0, 0, ['EXECUTION_STARTED', 'STEP_STARTED']))),
        );
        return ids;
      }

      it('20 concurrent step appends of 20 executions take fewer statements, and all are written', async () => {
        // A pool of 2 leaves one statement slot for step appends: the first goes alone, the rest wait and go together.
        const [stores] = await nodes(1, 2);
        const { events } = stores!;
        const ids = await started(events, 'grouped', 20);
        const queries = vi.spyOn(pg.Client.prototype, 'query');
        const results = await Promise.all(
          ids.map((id) => events.append(request(id, 2, 0, ['STEP_COMPLETED', 'STEP_STARTED']))),
        );
        expect(queries.mock.calls.length).toBeLessThanOrEqual(3);
        queries.mockRestore();
        expect(results).toEqual(ids.map(() => ({ lastSeq: 3, status: 'running' })));
        for (const id of ids) expect((await events.read(id)).map((event) => event.seq)).toEqual([0, 1, 2, 3]);
      });

      it('L4: a stale fence and a taken seq in a group fail their own callers only; the rest are written', async () => {
        const [a, b] = await nodes(2, 2);
        const ids = await started(a!.events, 'l4', 12);
        const fence = await b!.events.acquireFence('l4-3'); // fences a out of l4-3
        await b!.events.append(request('l4-7', 2, 0, ['STEP_COMPLETED'])); // takes seq 2 of l4-7
        const settled = await Promise.allSettled(
          ids.map((id) => a!.events.append(request(id, 2, 0, ['STEP_COMPLETED', 'STEP_STARTED']))),
        );
        settled.forEach((outcome, i) => {
          if (i === 3) expect(outcome).toMatchObject({ status: 'rejected', reason: { current: fence } });
          else if (i === 7) expect(outcome).toMatchObject({ status: 'rejected' });
          else expect(outcome).toEqual({ status: 'fulfilled', value: { lastSeq: 3, status: 'running' } });
        });
        expect((settled[3] as PromiseRejectedResult).reason).toBeInstanceOf(StaleFenceError);
        expect((settled[7] as PromiseRejectedResult).reason).toBeInstanceOf(DuplicateSequenceError);
        expect(await a!.events.read('l4-3')).toHaveLength(2);
        expect(await a!.events.read('l4-7')).toHaveLength(3);
      });

      it('L4: a reused envelope id aborts the grouped statement, and each request then goes alone', async () => {
        const [stores] = await nodes(1, 2);
        const { events } = stores!;
        const ids = await started(events, 'envelope', 10);
        const requests = ids.map((id) => request(id, 2, 0, ['STEP_COMPLETED', 'STEP_STARTED']));
        requests[6]!.events[1]!.envelopeId = requests[2]!.events[0]!.envelopeId;
        const settled = await Promise.allSettled(requests.map((r) => events.append(r)));
        const rejected = settled.flatMap((outcome, i) => (outcome.status === 'rejected' ? [i] : []));
        // Whichever of 2 and 6 is written first keeps the id; the other is refused and writes nothing.
        expect(rejected).toHaveLength(1);
        expect([2, 6]).toContain(rejected[0]);
        expect((settled[rejected[0]!] as PromiseRejectedResult).reason).toBeInstanceOf(
          DuplicateEnvelopeIdError,
        );
        for (const [i, id] of ids.entries()) {
          expect(await events.read(id)).toHaveLength(i === rejected[0] ? 2 : 4);
        }
      });

      it('starts, step appends and status moves of 30 executions go out in one grouped statement, each written as if alone', async () => {
        const [stores] = await nodes(1, 2);
        const { events } = stores!;
        const stepping = await started(events, 'mixed-step', 10);
        const moving = await started(events, 'mixed-move', 10);
        const starting = Array.from({ length: 10 }, (_, i) => `mixed-start-${i}`);
        const queries = vi.spyOn(pg.Client.prototype, 'query');
        const results = await Promise.all([
          ...starting.map((id) => events.append(request(id, 0, 0, ['EXECUTION_STARTED', 'STEP_STARTED']))),
          ...stepping.map((id) => events.append(request(id, 2, 0, ['STEP_COMPLETED', 'STEP_STARTED']))),
          ...moving.map((id, i) =>
            events.append(
              request(id, 2, 0, [
                'STEP_COMPLETED',
                i % 2 === 0 ? 'EXECUTION_COMPLETED' : 'EXECUTION_SUSPENDED',
              ]),
            ),
          ),
        ]);
        // The first goes alone while the other 29 wait for its slot, then they go together.
        const names = queries.mock.calls.map(([query]) => (query as { name?: string }).name);
        queries.mockRestore();
        expect(names).toHaveLength(2);
        expect(names[1]).toBe('skein_append_batch');
        expect(results).toEqual([
          ...starting.map(() => ({ lastSeq: 1, status: 'running' })),
          ...stepping.map(() => ({ lastSeq: 3, status: 'running' })),
          ...moving.map((_, i) => ({ lastSeq: 3, status: i % 2 === 0 ? 'completed' : 'suspended' })),
        ]);
        for (const id of starting) {
          expect((await events.read(id)).map((event) => event.seq)).toEqual([0, 1]);
          expect(await events.getExecution(id)).toMatchObject({
            workflow: 'wf',
            status: 'running',
            sequence: 1,
          });
        }
        for (const id of [...stepping, ...moving]) {
          expect((await events.read(id)).map((event) => event.seq)).toEqual([0, 1, 2, 3]);
        }
        const completed = await events.listExecutions({ status: ['completed'] });
        expect(completed.items.map((item) => item.executionId).sort()).toEqual(
          moving.filter((_, i) => i % 2 === 0).sort(),
        );
        // The next short appends take the hints the group left: a step after the start, a resume after the suspension.
        await events.append(request(starting[0]!, 2, 0, ['STEP_COMPLETED']));
        await events.append(request(moving[1]!, 4, 0, ['EXECUTION_RESUMED']));
        expect(await events.getExecution(moving[1]!)).toMatchObject({ status: 'running', sequence: 4 });
      });

      it('30 enqueues at once go out grouped, each heard once on the pending channel, and a refused one is not heard', async () => {
        const [stores] = await nodes(1, 2);
        const { events, wakeups } = stores!;
        const heard: string[] = [];
        cleanups.push(await wakeups.subscribe(WAKEUP_PENDING, (id) => heard.push(id)));
        await events.append(request('enqueued-taken', 0, 0, ['EXECUTION_STARTED']));
        const ids = Array.from({ length: 30 }, (_, i) => `enqueued-${String(i).padStart(2, '0')}`);
        const queries = vi.spyOn(pg.Client.prototype, 'query');
        const settled = await Promise.allSettled([
          ...ids.map((id) => events.append(request(id, 0, 0, ['EXECUTION_STARTED']))),
          events.append(request('enqueued-taken', 0, 0, ['EXECUTION_STARTED'])),
        ]);
        const names = queries.mock.calls.map(([query]) => (query as { name?: string }).name);
        queries.mockRestore();
        expect(settled.slice(0, 30)).toEqual(
          ids.map(() => ({ status: 'fulfilled', value: { lastSeq: 0, status: 'pending' } })),
        );
        expect((settled[30] as PromiseRejectedResult).reason).toBeInstanceOf(ExecutionAlreadyExistsError);
        // The taken id aborts the group: every request goes alone, and only the taken one then takes the full statement.
        expect(names.filter((name) => name === 'skein_append_batch')).toHaveLength(1);
        await events.append(request('enqueued-last', 0, 0, ['EXECUTION_STARTED']));
        await vi.waitFor(() => expect(heard).toContain('enqueued-last'), { timeout: 5000, interval: 20 });
        expect(heard.sort()).toEqual(['enqueued-taken', ...ids, 'enqueued-last'].sort());
        const pending = await events.listExecutions({ status: ['pending'], limit: 100 });
        expect(pending.items).toHaveLength(32);
      });

      it('30 enqueues at once, none refused, are written by the group itself and each heard once', async () => {
        const [stores] = await nodes(1, 2);
        const { events, wakeups } = stores!;
        const heard: string[] = [];
        cleanups.push(await wakeups.subscribe(WAKEUP_PENDING, (id) => heard.push(id)));
        const ids = Array.from({ length: 30 }, (_, i) => `grouped-enqueue-${String(i).padStart(2, '0')}`);
        const queries = vi.spyOn(pg.Client.prototype, 'query');
        await Promise.all(ids.map((id) => events.append(request(id, 0, 0, ['EXECUTION_STARTED']))));
        const names = queries.mock.calls.map(([query]) => (query as { name?: string }).name);
        queries.mockRestore();
        expect(names).toEqual(['skein_append_enqueue_1', 'skein_append_batch']);
        await events.append(request('grouped-enqueue-last', 0, 0, ['EXECUTION_STARTED']));
        await vi.waitFor(() => expect(heard).toContain('grouped-enqueue-last'), {
          timeout: 5000,
          interval: 20,
        });
        expect(heard.sort()).toEqual([...ids, 'grouped-enqueue-last'].sort());
      });

      it('L4: a fenced-out status move and step append in a mixed group fail their own callers only; the rest are written', async () => {
        const [a, b] = await nodes(2, 2);
        const ids = await started(a!.events, 'mixed-l4', 8);
        const moveFence = await b!.events.acquireFence('mixed-l4-2'); // fences a out of a move
        const stepFence = await b!.events.acquireFence('mixed-l4-5'); // and out of a step append
        const queries = vi.spyOn(pg.Client.prototype, 'query');
        const settled = await Promise.allSettled([
          ...ids.map((id, i) =>
            a!.events.append(
              request(id, 2, 0, ['STEP_COMPLETED', i < 4 ? 'EXECUTION_COMPLETED' : 'STEP_STARTED']),
            ),
          ),
          a!.events.append(request('mixed-l4-new', 0, 0, ['EXECUTION_STARTED', 'STEP_STARTED'])),
        ]);
        const names = queries.mock.calls.map(([query]) => (query as { name?: string }).name);
        queries.mockRestore();
        // One alone, the other eight grouped; the group writes seven, and the two refused go to the full statement.
        expect(names.filter((name) => name === 'skein_append_batch')).toHaveLength(1);
        expect(names.filter((name) => name === 'skein_append')).toHaveLength(2);
        settled.forEach((outcome, i) => {
          if (i === 2) expect(outcome).toMatchObject({ status: 'rejected', reason: { current: moveFence } });
          else if (i === 5)
            expect(outcome).toMatchObject({ status: 'rejected', reason: { current: stepFence } });
          else if (i === 8)
            expect(outcome).toEqual({ status: 'fulfilled', value: { lastSeq: 1, status: 'running' } });
          else {
            const status = i < 4 ? 'completed' : 'running';
            expect(outcome).toEqual({ status: 'fulfilled', value: { lastSeq: 3, status } });
          }
        });
        expect((settled[2] as PromiseRejectedResult).reason).toBeInstanceOf(StaleFenceError);
        expect((settled[5] as PromiseRejectedResult).reason).toBeInstanceOf(StaleFenceError);
        for (const id of ['mixed-l4-2', 'mixed-l4-5']) {
          expect(await b!.events.read(id)).toHaveLength(2);
          expect(await b!.events.getExecution(id)).toMatchObject({ status: 'running', sequence: 1 });
        }
        expect(await b!.events.read('mixed-l4-new')).toHaveLength(2);
      });

      it('L3: a start in a group whose head an acquireFence created aborts the group; each request then goes alone, and only that start is refused', async () => {
        const [a, b] = await nodes(2, 2);
        const ids = await started(a!.events, 'fenced-group', 6);
        await b!.events.acquireFence('fenced-group-start');
        const current = await b!.events.acquireFence('fenced-group-start');
        const settled = await Promise.allSettled([
          ...ids.map((id) => a!.events.append(request(id, 2, 0, ['STEP_COMPLETED', 'STEP_STARTED']))),
          a!.events.append(
            request('fenced-group-start', 0, current - 1, ['EXECUTION_STARTED', 'STEP_STARTED']),
          ),
          a!.events.append(request('fenced-group-other', 0, 0, ['EXECUTION_STARTED', 'STEP_STARTED'])),
        ]);
        expect(settled.slice(0, 6)).toEqual(
          ids.map(() => ({ status: 'fulfilled', value: { lastSeq: 3, status: 'running' } })),
        );
        expect(settled[6]).toMatchObject({ status: 'rejected', reason: { fence: current - 1, current } });
        expect((settled[6] as PromiseRejectedResult).reason).toBeInstanceOf(StaleFenceError);
        expect(settled[7]).toEqual({ status: 'fulfilled', value: { lastSeq: 1, status: 'running' } });
        expect(await b!.events.read('fenced-group-start')).toEqual([]);
        expect(await b!.events.read('fenced-group-other')).toHaveLength(2);
        for (const id of ids) expect(await b!.events.read(id)).toHaveLength(4);
      });

      it('a group the server aborts as a deadlock is not lost: each request goes alone and is written', async () => {
        const [stores] = await nodes(1, 2);
        const { events } = stores!;
        const [x, y] = await started(events, 'deadlock', 2);
        await events.append(request('deadlock-alone', 0, 0, ['EXECUTION_STARTED']));
        // Another session holds y's head; the group will lock x's head, then wait for y's.
        const other = new pg.Client({
          connectionString: PG_URL,
          options: `-c search_path=${stores!.schema}`,
        });
        await other.connect();
        cleanups.push(() => other.end());
        await other.query('BEGIN');
        await other.query("SET LOCAL deadlock_timeout = '10s'"); // the group's backend detects the cycle first
        await other.query('SELECT 1 FROM skein_executions WHERE execution_id = $1 FOR UPDATE', [y]);
        const queries = vi.spyOn(pg.Client.prototype, 'query');
        // The first append takes the only slot; the moves of x and y wait for it and go out together.
        const appends = [
          events.append(request('deadlock-alone', 1, 0, ['EXECUTION_COMPLETED'])),
          events.append(request(x!, 2, 0, ['STEP_COMPLETED', 'EXECUTION_COMPLETED'])),
          events.append(request(y!, 2, 0, ['STEP_COMPLETED', 'EXECUTION_COMPLETED'])),
        ];
        await vi.waitFor(
          async () => {
            const waiting = await adminQuery(
              "SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%WITH moved AS%' AND pid <> pg_backend_pid()",
            );
            expect(waiting).toHaveLength(1);
          },
          { timeout: 5000, interval: 20 },
        );
        // Now the other session wants x's head, which the group holds: a cycle.
        const lockX = other.query('SELECT 1 FROM skein_executions WHERE execution_id = $1 FOR UPDATE', [x]);
        await lockX;
        await other.query('COMMIT');
        const results = await Promise.all(appends);
        const names = queries.mock.calls.map(([query]) => (query as { name?: string }).name);
        queries.mockRestore();
        // The group failed whole (40P01), and each move was then decided by the full statement.
        expect(names.filter((name) => name === 'skein_append_batch')).toHaveLength(1);
        expect(names.filter((name) => name === 'skein_append')).toHaveLength(2);
        expect(results.map((result) => result.status)).toEqual(['completed', 'completed', 'completed']);
        for (const id of [x!, y!]) {
          expect(await events.getExecution(id)).toMatchObject({ status: 'completed', sequence: 3 });
        }
      });
    });
  });
});
