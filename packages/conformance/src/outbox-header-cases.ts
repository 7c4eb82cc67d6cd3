/**
 * Outbox headers (adr/0072): the string headers of a message (the enqueuer's W3C trace
 * context) are written with its ledger row, by `write` and by an append alike (O1), and every
 * read hands them back as they were written (`claim`, `get`, `list`); a message without
 * headers reads back without the field. Ill-formed headers are refused before anything is
 * written (L7), naming the header.
 */
import { ErrorCodes, type OutboxStore, type Stores } from '@skein/workflow-runtime';
import { newId } from '@skein/workflow-runtime/internal';
import type { OutboxMessage } from '@skein/workflow-runtime/spi';
import { expect, it } from 'vitest';
import { draft } from './drafts.js';
import { rejectionOf } from './harness.js';

type S = Pick<Stores, 'events' | 'close'> & { outbox: OutboxStore };

const TRACE = {
  traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
  tracestate: 'congo=t61rcWkgMzE,rojo=00f067aa0ba902b7',
};

function message(key: string, headers?: Record<string, string>): OutboxMessage {
  return { id: newId(), topic: 't', key, payload: '{}', createdAt: 1_000, ...(headers ? { headers } : {}) };
}

/** Register the header cases. */
export function outboxHeaderCases(run: (body: (stores: S) => Promise<void>) => () => Promise<void>): void {
  it(
    'headers: written by write and by an append, handed back by claim, get and list as written',
    run(async ({ events, outbox }) => {
      const written = message('w', TRACE);
      const bare = message('bare');
      await outbox.write([written, bare]);
      const appended = message('a', { traceparent: TRACE.traceparent });
      await events.append({
        executionId: 'a',
        workflow: 'wf',
        expectedSeq: 0,
        fence: 0,
        events: [draft('EXECUTION_STARTED')],
        outbox: [appended],
      });
      expect((await outbox.get(written.id))?.headers).toEqual(TRACE);
      expect((await outbox.get(appended.id))?.headers).toEqual({ traceparent: TRACE.traceparent });
      expect(await outbox.get(bare.id)).not.toHaveProperty('headers');
      const claimed = await outbox.claim({ now: 1_000, limit: 10, leaseMs: 1_000 });
      const byKey = new Map(claimed.map((d) => [d.key, d]));
      expect(byKey.get('w')?.headers).toEqual(TRACE);
      expect(byKey.get('a')?.headers).toEqual({ traceparent: TRACE.traceparent });
      expect(byKey.get('bare')).not.toHaveProperty('headers');
      const listed = new Map((await outbox.list()).map((d) => [d.key, d]));
      expect(listed.get('w')?.headers).toEqual(TRACE);
    }),
  );

  it(
    'L7: ill-formed headers are refused naming the header, and nothing is written',
    run(async ({ events, outbox }) => {
      const cases: Record<string, string>[] = [
        { 'x-skein-attempt': '1' },
        { Traceparent: TRACE.traceparent },
        { traceparent: 'line\nbreak' },
        { big: 'v'.repeat(1_025) },
        Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`h${i}`, 'v'])),
      ];
      for (const headers of cases) {
        const error = await rejectionOf(outbox.write([message('bad', headers)]));
        expect(error).toMatchObject({ code: ErrorCodes.InvalidInput });
        expect(error.message).toMatch(/headers/);
      }
      const refused = await rejectionOf(
        events.append({
          executionId: 'b',
          workflow: 'wf',
          expectedSeq: 0,
          fence: 0,
          events: [draft('EXECUTION_STARTED')],
          outbox: [message('b', { 'X-Bad': 'v' })],
        }),
      );
      expect(refused.message).toMatch(/headers/);
      expect(await events.read('b')).toEqual([]);
      expect(await outbox.list()).toEqual([]);
    }),
  );
}
