/**
 * Event payloads are typed per event type (`EventPayloads`), and an envelope is a union keyed
 * on `type`: a reader's `switch (event.type)` narrows the payload, and reading a field another
 * type's payload has fails to compile. docs/concepts.md lists every event type.
 */
import { readFileSync } from 'node:fs';
import {
  type CompletedPayload,
  defineWorkflow,
  type Envelope,
  type EventPayloads,
  type EventType,
  EventTypes,
  fold,
  type StepCompletedPayload,
  type StepFailedPayload,
} from '@skein/workflow-runtime';
import { type FoldableEvent, toEnvelope } from '@skein/workflow-runtime/internal';
import { describe, expect, expectTypeOf, test } from 'vitest';
import { z } from 'zod';
import { backings, harness } from './support/stores.js';

/** What a user writes over `runtime.history`: one line per step outcome, no casts. */
function stepLines(log: readonly Envelope[]): string[] {
  const lines: string[] = [];
  for (const event of log) {
    switch (event.type) {
      case 'STEP_COMPLETED':
        expectTypeOf(event.payload).toEqualTypeOf<StepCompletedPayload>();
        if (event.payload.kind === 'step')
          lines.push(`${event.payload.name} ok at #${event.payload.position}`);
        break;
      case 'STEP_FAILED':
        expectTypeOf(event.payload).toEqualTypeOf<StepFailedPayload>();
        lines.push(`${event.payload.name} failed attempt ${event.payload.attempt}`);
        break;
      case 'EXECUTION_COMPLETED':
        expectTypeOf(event.payload).toEqualTypeOf<CompletedPayload>();
        lines.push(`done: ${String(event.payload.output)}`);
        break;
      default:
        break;
    }
  }
  return lines;
}

describe('typed event payloads (types)', () => {
  test('EventPayloads has one entry per event type, and Envelope<T> carries that entry', () => {
    expectTypeOf<keyof EventPayloads>().toEqualTypeOf<EventType>();
    expectTypeOf<Envelope<'TIMER_FIRED'>['payload']>().toEqualTypeOf<EventPayloads['TIMER_FIRED']>();
    expectTypeOf<Envelope<'EXECUTION_STARTED'>['payload']['workflow']>().toEqualTypeOf<string>();
    expectTypeOf<FoldableEvent<'STEP_STARTED'>['payload']>().toEqualTypeOf<EventPayloads['STEP_STARTED']>();
    expectTypeOf<Envelope['type']>().toEqualTypeOf<EventType>();
  });

  test('reading a field the unnarrowed payload may lack fails to compile; narrowing makes it compile', () => {
    const read = (event: Envelope) => {
      // @ts-expect-error: `output` is not on every payload (EXECUTION_STARTED has none)
      void event.payload.output;
      // @ts-expect-error: an event type that does not exist is no case of the union
      if (event.type === 'STEP_DONE') return;
      if (event.type === 'EXECUTION_COMPLETED') return event.payload.output;
      return undefined;
    };
    expect(typeof read).toBe('function');
  });

  test('an envelope whose payload does not match its type fails to compile', () => {
    const good: Envelope<'TIMER_FIRED'> = {
      executionId: 'x',
      seq: 3,
      envelopeId: 'e',
      type: 'TIMER_FIRED',
      payload: { timerId: 't', position: 1 },
      fence: 0,
      recordedAt: new Date(0),
    };
    const bad: Envelope = {
      ...good,
      // @ts-expect-error: a TIMER_FIRED payload has no `output`, and lacks `timerId` here
      payload: { output: 1 },
    };
    expect([good.type, bad.type]).toEqual(['TIMER_FIRED', 'TIMER_FIRED']);
  });
});

describe.each(backings)('typed event payloads (%s store)', (_, open) => {
  const h = harness(open);

  test("runtime.history's envelopes narrow on type, and fold takes toEnvelope's output", async () => {
    const { stores } = h.open();
    let calls = 0;
    const workflow = defineWorkflow({
      name: 'typed-history',
      input: z.object({ n: z.number() }),
      async run(ctx, { n }) {
        const doubled = await ctx.step(
          'double',
          () => {
            calls += 1;
            if (calls === 1) throw new Error('once');
            return n * 2;
          },
          { retry: { maxAttempts: 2, initialMs: 1, jitter: 0 } },
        );
        return `n=${doubled}`;
      },
    });
    const runtime = h.runtime({ stores, workflows: [workflow] });
    const handle = await runtime.start(workflow, { n: 21 }, { executionId: 'typed-1' });
    await expect(handle.result()).resolves.toBe('n=42');
    const log = await runtime.history('typed-1');
    expect(stepLines(log)).toEqual(['double failed attempt 1', 'double ok at #0', 'done: n=42']);
    const stored = await stores.events.read('typed-1', 0);
    expect(fold(stored.map((event) => toEnvelope(event)))).toStrictEqual(await runtime.loadState('typed-1'));
  });
});

describe('docs/concepts.md', () => {
  test('its event table lists every event type, once', () => {
    const text = readFileSync(new URL('../../../docs/concepts.md', import.meta.url), 'utf8');
    const rows = [...text.matchAll(/^\| `([A-Z_]+)` \|/gm)].map((match) => match[1]);
    expect(rows).toEqual([...EventTypes]);
  });
});
