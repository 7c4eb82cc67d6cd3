/**
 * Headers of `execution.pending` (docs/outbox.md#headers): `outboxHeaders` writes them with the
 * message in the append of seq 0 (O1); a hook that throws writes none and the enqueue goes on;
 * ill-formed ones refuse the enqueue before anything is written (L7); and a Supervisor hands a
 * heard message's well-formed trace context, and only that, to its `onTraceparent`. Real
 * SQLite files.
 */
import { StoreTransport, Supervisor } from '@skein/worker-runtime-local';
import { defineWorkflow, ErrorCodes, InvalidInputError } from '@skein/workflow-runtime';
import { newId } from '@skein/workflow-runtime/internal';
import { EXECUTION_PENDING_TOPIC } from '@skein/workflow-runtime/spi';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { harness, until } from './support/sqlite.js';

const h = harness();
const job = defineWorkflow({
  name: 'job',
  input: z.object({ n: z.number() }),
  async run(ctx, input) {
    return ctx.step('work', () => input.n * 2);
  },
});
const TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

describe('outbox headers of enqueue', () => {
  it('O1: outboxHeaders are written with execution.pending, in the append of seq 0', async () => {
    const { stores } = h.db();
    const asked: string[] = [];
    const runtime = h.runtime({
      stores,
      workflows: [job],
      outbox: true,
      outboxHeaders: (id) => {
        asked.push(id);
        return { traceparent: TRACEPARENT, tracestate: 'a=1' };
      },
    });
    await runtime.enqueue(job, { n: 1 }, { executionId: 'e1' });
    expect(asked).toEqual(['e1']);
    const [message] = await stores.outbox!.list();
    expect(message).toMatchObject({ key: 'e1', headers: { traceparent: TRACEPARENT, tracestate: 'a=1' } });
  });

  it('a hook that throws writes no headers, is reported, and the enqueue goes on', async () => {
    const { stores } = h.db();
    const errors: string[] = [];
    const runtime = h.runtime({
      stores,
      workflows: [job],
      outbox: true,
      outboxHeaders: () => {
        throw new Error('no tracer');
      },
      onError: (_, context) => errors.push(context),
    });
    await runtime.enqueue(job, { n: 1 }, { executionId: 'e1' });
    const [message] = await stores.outbox!.list();
    expect(message).toMatchObject({ key: 'e1', status: 'pending' });
    expect(message).not.toHaveProperty('headers');
    expect(errors.some((context) => context.includes('outboxHeaders threw for execution "e1"'))).toBe(true);
  });

  it('L7: ill-formed headers refuse the enqueue, naming the header; nothing is written', async () => {
    const { stores } = h.db();
    const runtime = h.runtime({
      stores,
      workflows: [job],
      outbox: true,
      outboxHeaders: () => ({ 'x-skein-attempt': '9' }),
    });
    const error = await runtime.enqueue(job, { n: 1 }, { executionId: 'e1' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidInputError);
    expect((error as InvalidInputError).code).toBe(ErrorCodes.InvalidInput);
    expect(String((error as Error).message)).toContain('x-skein-attempt');
    expect(await stores.events.read('e1')).toEqual([]);
    expect(await stores.outbox!.list()).toEqual([]);
  });

  it('L7: outboxHeaders without outbox: true, or not a function, is refused naming the option', () => {
    const { stores } = h.db();
    expect(() => h.runtime({ stores, workflows: [job], outboxHeaders: () => ({}) })).toThrow(
      /outboxHeaders.*outbox is not true/s,
    );
    expect(() =>
      h.runtime({ stores, workflows: [job], outbox: true, outboxHeaders: 'traceparent' as never }),
    ).toThrow(/outboxHeaders.*must be a function/s);
    const runtime = h.runtime({ stores, workflows: [job], outbox: true, lease: { ttlMs: 10_000 } });
    expect(() => new Supervisor({ runtime, stores, onTraceparent: 1 as never })).toThrow(
      /onTraceparent.*must be a function/s,
    );
  });
});

describe('Supervisor({ onTraceparent })', () => {
  it("hands a heard message's trace context to the hook for the run, forgets it at the end, and ignores a malformed one", async () => {
    const { stores } = h.db();
    const runtime = h.runtime({ stores, workflows: [job], outbox: true, lease: { ttlMs: 60_000 } });
    const transport = new StoreTransport({ stores, pollIntervalMs: 10, retention: false });
    const told: string[] = [];
    const supervisor = new Supervisor({
      runtime,
      stores,
      transport,
      tickIntervalMs: 30_000,
      onTraceparent: (id, traceparent, tracestate) => {
        told.push(`${id} ${traceparent} ${tracestate ?? '-'}`);
        return () => told.push(`${id} forgotten`);
      },
    });
    supervisor.start();
    await supervisor.listening();
    await supervisor.tick();
    // Seq 0 of both, then their messages as another writer of this outbox might have sent them.
    const writer = h.runtime({ stores, workflows: [job], maintenance: false });
    for (const [id, traceparent] of [
      ['good', TRACEPARENT],
      ['bad', '00-00000000000000000000000000000000-b7ad6b7169203331-01'],
    ] as const) {
      const ts = Date.now();
      await writer.enqueue(job, { n: 1 }, { executionId: id });
      await stores.outbox!.write([
        {
          id: newId(),
          topic: EXECUTION_PENDING_TOPIC,
          key: id,
          payload: JSON.stringify({ executionId: id, workflow: 'job', version: 1 }),
          createdAt: ts,
          headers: { traceparent, tracestate: 'a=1' },
        },
      ]);
    }
    try {
      await until(async () => {
        const states = await Promise.all(['good', 'bad'].map((id) => runtime.loadState(id)));
        return states.every((state) => state?.status === 'completed') && told.length === 2;
      }, 10_000);
    } finally {
      await supervisor.stop();
      await transport.close();
    }
    expect(told).toEqual([`good ${TRACEPARENT} a=1`, 'good forgotten']);
  });
});
