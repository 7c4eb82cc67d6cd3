/**
 * Creating a large fan-out on PostgreSQL: the dispatch's chunk-ready messages go to the outbox a
 * bounded number per statement, inside the one dispatch transaction, so the creator never holds
 * (or sends) one statement with every chunk's message in it; a seed batch names the one input
 * that holds U+0000 and writes nothing.
 */
import { defineTask } from '@skein/workflow-runtime';
import { createFanOut } from '@skein/workflow-runtime/internal';
import { chunkReadyTopic, INITIAL_WRITE_EPOCH } from '@skein/workflow-runtime/spi';
import pg from 'pg';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { NulInTextError } from '../src/errors.js';
import { adminQuery, openTestStores, whenPostgres } from './support/pg.js';

const score = defineTask({
  name: 'score',
  input: z.object({ i: z.number().int() }),
  async run(input) {
    return input.i;
  },
});

/** What each statement a `pg` client sent was: its name, or its text for BEGIN and COMMIT. */
function statementOf(args: unknown[]): { what: string; messages: number } {
  const [first] = args;
  if (typeof first === 'string') return { what: first.trim(), messages: 0 };
  const query = first as { name?: string; text?: string; values?: unknown[][] };
  const what = query.name ?? query.text?.trim() ?? '';
  return { what, messages: what === 'skein_outbox_write' ? query.values![0]!.length : 0 };
}

whenPostgres(() => {
  describe('postgres fan-out creation', () => {
    it('F1: 2 500 chunks are dispatched 1 000 messages a statement at most, all in the one transaction', async () => {
      const stores = await openTestStores();
      try {
        const total = 2_500;
        const plan = {
          fanOutId: 'big',
          executionId: 'e-big',
          name: 'cases',
          task: score.name,
          taskVersion: score.version,
          chunkSize: 1,
          shards: ['main'],
          required: true,
          maxAttempts: 2,
        };
        const queries = vi.spyOn(pg.Client.prototype, 'query');
        let sent: { what: string; messages: number }[];
        try {
          await createFanOut({
            home: stores.fanOuts,
            shards: { main: stores.fanOuts },
            plan,
            task: score,
            items: (from, limit) =>
              Array.from({ length: Math.max(0, Math.min(limit, total - from)) }, (_, k) => ({ i: from + k })),
            owner: 'creator',
          });
        } finally {
          sent = queries.mock.calls.map((args) => statementOf(args));
          queries.mockRestore();
        }
        const writes = sent.filter((s) => s.what === 'skein_outbox_write');
        expect(writes.map((s) => s.messages)).toEqual([1_000, 1_000, 500]);
        const first = sent.findIndex((s) => s.what === 'skein_outbox_write');
        const last = sent.findLastIndex((s) => s.what === 'skein_outbox_write');
        const begin = sent.slice(0, first).findLastIndex((s) => s.what === 'BEGIN');
        const between = sent.slice(begin, last + 1).map((s) => s.what);
        expect(between.filter((what) => what === 'BEGIN' || what === 'COMMIT')).toEqual(['BEGIN']);
        expect(sent[last + 1]?.what).toBe('COMMIT');
        const rows = await adminQuery<{ n: number; keys: number }>(
          `SELECT count(*)::int AS n, count(DISTINCT key)::int AS keys FROM "${stores.schema}".skein_outbox_events WHERE topic = $1`,
          [chunkReadyTopic('main')],
        );
        expect(rows[0]).toEqual({ n: total, keys: total });
        expect(await stores.fanOuts.get('big')).toMatchObject({ status: 'dispatched', total });
      } finally {
        await stores.close();
      }
    });

    it('a seed batch with U+0000 in one input is refused naming that input, and writes nothing', async () => {
      const stores = await openTestStores();
      try {
        const plan = {
          fanOutId: 'nul',
          executionId: 'e-nul',
          name: 'cases',
          task: score.name,
          taskVersion: score.version,
          chunkSize: 3,
          shards: ['main'],
          required: true,
          maxAttempts: 2,
        };
        const { token } = await stores.fanOuts.create(plan, { owner: 'a', now: 1_000, ttlMs: 60_000 });
        const seed = (chunkId: number, inputs: string[]) => ({
          fanOutId: 'nul',
          shard: 'main',
          chunkId,
          storeAlias: 'main',
          firstIndex: chunkId * 3,
          inputs,
          writeEpoch: INITIAL_WRITE_EPOCH,
          maxAttempts: 2,
          now: 1_000,
        });
        const seeds = [seed(0, ['"a"', '"b"', '"c"']), seed(1, ['"d"', '"e\u0000"', '"f"'])];
        const cursor = { fanOutId: 'nul', token: token!, seededChunks: 2, seededItems: 6 };
        const refused = stores.fanOuts.seedChunks(seeds, cursor);
        await expect(refused).rejects.toBeInstanceOf(NulInTextError);
        await expect(refused).rejects.toMatchObject({
          field: 'seeds[1].inputs[1]',
          operation: 'fanOuts.seedChunks',
        });
        expect(await stores.fanOuts.get('nul')).toMatchObject({ status: 'creating', seededChunks: 0 });
        expect(await stores.fanOuts.chunk('nul', 'main', 0)).toBeNull();
      } finally {
        await stores.close();
      }
    });
  });
});
