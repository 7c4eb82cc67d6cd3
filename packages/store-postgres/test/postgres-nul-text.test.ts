/**
 * U+0000 in the timer, lease, signal, snapshot, outbox and fan-out stores (the event store's refusals are in
 * postgres-append.test.ts): a value that would be stored is refused with `NulInTextError`
 * before anything is sent; a key that only selects rows finds nothing, also without a query.
 */
import { NulInTextError, type PostgresStores } from '@skein/store-postgres';
import { encodeCursor } from '@skein/workflow-runtime/spi';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { claimedChunkOfThree } from './support/fan-out-chunk.js';
import { openTestStores, PG_URL, whenPostgres } from './support/pg.js';

const NUL = '\u0000';

/** Every row of `table` in the stores' schema, in a stable order. */
async function rowsOf(stores: PostgresStores, table: string, orderBy: string): Promise<unknown[]> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    return (await client.query(`SELECT * FROM "${stores.schema}".${table} ORDER BY ${orderBy}`)).rows;
  } finally {
    await client.end();
  }
}

/** Spy on the connections every store queries through; a call on one would mean something was sent. */
function watchQueries() {
  return vi.spyOn(pg.Client.prototype, 'query');
}

describe('NulInTextError', () => {
  it('names the store call, the execution when there is one, and the field', () => {
    const error = new NulInTextError(`e${NUL}1`, 'the timer id', 'timers.schedule');
    expect(error.message).toBe(
      'timers.schedule: execution "e\\u00001": the timer id contains U+0000, which PostgreSQL text cannot store',
    );
    expect(new NulInTextError(undefined, 'the lease key', 'leases.claim').message).toBe(
      'leases.claim: the lease key contains U+0000, which PostgreSQL text cannot store',
    );
    expect(new NulInTextError('e', 'the payload').message).toBe(
      'execution "e": the payload contains U+0000, which PostgreSQL text cannot store',
    );
    expect(error.toJSON()).toMatchObject({ code: 'POSTGRES_NUL_IN_TEXT', executionId: `e${NUL}1` });
  });
});

whenPostgres(() => {
  describe('postgres stores and U+0000', () => {
    let stores: PostgresStores;
    beforeAll(async () => {
      stores = await openTestStores();
    });
    afterAll(async () => {
      await stores.close();
    });
    afterEach(() => {
      vi.restoreAllMocks();
    });

    it('timers: U+0000 in a stored id or claim owner is refused unsent; an id holding it matches no timer', async () => {
      const { timers } = stores;
      await timers.schedule({ timerId: 't1', executionId: 'e1', dueAt: 10 });
      const queries = watchQueries();
      await expect(
        timers.schedule({ timerId: `t${NUL}`, executionId: 'e1', dueAt: 10 }),
      ).rejects.toMatchObject({
        name: 'NulInTextError',
        operation: 'timers.schedule',
        executionId: 'e1',
        field: 'the timer id',
      });
      await expect(
        timers.schedule({ timerId: 't2', executionId: `e${NUL}`, dueAt: 10 }),
      ).rejects.toMatchObject({
        operation: 'timers.schedule',
        field: 'the execution id',
      });
      const claim = { owner: `o${NUL}`, now: 100, claimTtlMs: 1000 };
      const claimDue = timers.claimDue({ ...claim, limit: 10 });
      await expect(claimDue).rejects.toBeInstanceOf(NulInTextError);
      await expect(claimDue).rejects.toMatchObject({
        operation: 'timers.claimDue',
        executionId: undefined,
        field: 'the claim owner',
      });
      await expect(timers.claim('t1', claim)).rejects.toMatchObject({
        operation: 'timers.claim',
        field: 'the claim owner',
      });
      expect(await timers.claim(`t1${NUL}`, { owner: 'o', now: 100, claimTtlMs: 1000 })).toBe(false);
      await timers.complete(`t1${NUL}`);
      expect(await timers.forExecution(`e1${NUL}`)).toEqual([]);
      expect(queries).not.toHaveBeenCalled();
      expect(await rowsOf(stores, 'skein_timers', 'timer_id')).toEqual([
        { timer_id: 't1', execution_id: 'e1', due_at: '10', claimed_by: null, claimed_until: '0' },
      ]);
    });

    it('leases: U+0000 in the key or owner of a claim is refused unsent; elsewhere it matches no lease', async () => {
      const { leases } = stores;
      await leases.claim('k', 'a', 100, 0);
      const queries = watchQueries();
      await expect(leases.claim(`k${NUL}`, 'a', 100, 0)).rejects.toMatchObject({
        name: 'NulInTextError',
        operation: 'leases.claim',
        executionId: undefined,
        field: 'the lease key',
      });
      // 'k' has expired at 500, so a claim by another owner would take it over if it were sent.
      await expect(leases.claim('k', `b${NUL}`, 100, 500)).rejects.toMatchObject({
        operation: 'leases.claim',
        field: 'the lease owner',
      });
      expect(await leases.renew(`k${NUL}`, 'a', 100, 50)).toBeNull();
      expect(await leases.renew('k', `a${NUL}`, 100, 50)).toBeNull();
      expect(await leases.release(`k${NUL}`, 'a')).toBe(false);
      expect(await leases.release('k', `a${NUL}`)).toBe(false);
      expect(await leases.get(`k${NUL}`)).toBeNull();
      expect(queries).not.toHaveBeenCalled();
      expect(await rowsOf(stores, 'skein_leases', 'key')).toEqual([
        { key: 'k', owner: 'a', expires_at: '100' },
      ]);
    });

    it('signals: U+0000 in any text of a sent signal is refused unsent; an id holding it matches no signal', async () => {
      const { signals } = stores;
      const signal = {
        signalId: 's1',
        executionId: 'e1',
        name: 'approve',
        payload: '{"s":"\\u0000"}',
        sentAt: 1,
      };
      await signals.send(signal);
      const queries = watchQueries();
      const refused = {
        'the signal id': { ...signal, signalId: `s2${NUL}` },
        'the execution id': { ...signal, signalId: 's3', executionId: `e1${NUL}` },
        'the signal name': { ...signal, signalId: 's4', name: `app${NUL}rove` },
        'the payload': { ...signal, signalId: 's5', payload: `{"s":"${NUL}"}` },
      };
      for (const [field, bad] of Object.entries(refused))
        await expect(signals.send(bad)).rejects.toMatchObject({
          name: 'NulInTextError',
          operation: 'signals.send',
          executionId: bad.executionId,
          field,
        });
      expect(await signals.pending(`e1${NUL}`)).toEqual([]);
      expect(await signals.pending('e1', { after: `s1${NUL}` })).toEqual([]);
      expect(await signals.pending('e1', { names: [`app${NUL}rove`] })).toEqual([]);
      await signals.complete('e1', `s1${NUL}`);
      await signals.complete(`e1${NUL}`, 's1');
      await signals.clear(`e1${NUL}`);
      expect(queries).not.toHaveBeenCalled();
      expect(await signals.pending('e1')).toEqual([signal]);
      expect(await rowsOf(stores, 'skein_signals', 'signal_id')).toHaveLength(1);
    });

    it('snapshots: U+0000 in the execution id or state is refused unsent; an id holding it has no snapshot', async () => {
      const { snapshots } = stores;
      await snapshots.put({ executionId: 'e1', seq: 1, state: '{"a":1}' });
      const queries = watchQueries();
      // seq 2 is newer, so this put would replace the stored snapshot if it were sent.
      await expect(
        snapshots.put({ executionId: 'e1', seq: 2, state: `{"a":"${NUL}"}` }),
      ).rejects.toMatchObject({
        name: 'NulInTextError',
        operation: 'snapshots.put',
        executionId: 'e1',
        field: 'the state',
      });
      await expect(snapshots.put({ executionId: `e1${NUL}`, seq: 1, state: '{}' })).rejects.toMatchObject({
        operation: 'snapshots.put',
        field: 'the execution id',
      });
      expect(await snapshots.latest(`e1${NUL}`)).toBeNull();
      await snapshots.delete(`e1${NUL}`);
      expect(queries).not.toHaveBeenCalled();
      expect(await rowsOf(stores, 'skein_snapshots', 'execution_id')).toEqual([
        { execution_id: 'e1', seq: '1', state: '{"a":1}' },
      ]);
    });

    it('listing: U+0000 in the workflow filter, a status filter or the cursor is refused unsent, not a database error', async () => {
      const { events } = stores;
      const queries = watchQueries();
      const refused = [
        [{ workflow: `wf${NUL}` }, 'the workflow filter'],
        [{ status: [`running${NUL}` as 'running'] }, 'the status filter'],
        [{ cursor: encodeCursor(`order${NUL}1`) }, 'the cursor'],
        [{ workflow: 'wf', cursor: encodeCursor(NUL) }, 'the cursor'],
      ] as const;
      for (const [query, field] of refused) {
        const listing = events.listExecutions(query);
        await expect(listing, field).rejects.toBeInstanceOf(NulInTextError);
        await expect(listing, field).rejects.toMatchObject({ operation: 'events.listExecutions', field });
      }
      expect(queries).not.toHaveBeenCalled();
      await expect(events.listExecutions({ workflow: 'wf' })).resolves.toEqual({ items: [] });
    });

    it('outbox: U+0000 in any text of any message is refused unsent, naming the message and the field', async () => {
      const message = (k: number) => ({
        id: `nul-${k}`,
        topic: 't',
        key: `k${k}`,
        payload: '{}',
        createdAt: 1,
      });
      const queries = watchQueries();
      for (const field of ['id', 'topic', 'key', 'payload'] as const) {
        const messages = [message(0), { ...message(1), [field]: `a${NUL}b` }];
        const write = stores.outbox.write(messages);
        await expect(write).rejects.toBeInstanceOf(NulInTextError);
        await expect(write).rejects.toMatchObject({ field: `outbox[1].${field}`, operation: 'outbox.write' });
      }
      expect(queries).not.toHaveBeenCalled();
      queries.mockRestore();
      expect(await stores.outbox.list()).toEqual([]);
    });

    it('fan-outs: U+0000 in the output of a result is refused unsent, naming the result; the items stay running', async () => {
      const fanOuts = stores.fanOuts;
      const { claim, ref } = await claimedChunkOfThree(fanOuts, 'nul', 'w');
      const results = claim.items.map((item) => ({
        index: item.index,
        attemptId: item.attemptId,
        attempt: item.attempt,
        status: 'succeeded' as const,
        output: item.index === 1 ? `{"s":"a${NUL}b"}` : '{"s":"ok"}',
      }));
      const queries = watchQueries();
      for (const write of [
        fanOuts.recordResults(ref, results, 3_000),
        fanOuts.releaseChunk(ref, { now: 3_000, results }),
      ]) {
        await expect(write).rejects.toBeInstanceOf(NulInTextError);
        await expect(write).rejects.toMatchObject({ field: 'results[1]' });
      }
      expect(queries).not.toHaveBeenCalled();
      queries.mockRestore();
      const statuses = (await rowsOf(stores, 'skein_fan_out_items', 'item_index')) as { status: string }[];
      expect(statuses.map((row) => row.status)).toEqual(['running', 'running', 'running']);
    });
  });
});
