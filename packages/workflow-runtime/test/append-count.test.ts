import { defineWorkflow, type EventStore, InvalidInputError } from '@skein/workflow-runtime';
import type { AppendRequest } from '@skein/workflow-runtime/spi';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { backings, harness, types, withEvents } from './support/stores.js';

/**
 * Wraps an event store: keeps every append request it receives and counts its summary reads
 * (`getExecution`).
 */
function recordingAppends(inner: EventStore): {
  events: EventStore;
  appends: AppendRequest[];
  summaryReads(): number;
} {
  const appends: AppendRequest[] = [];
  let reads = 0;
  const events: EventStore = Object.create(inner);
  events.append = (request) => {
    appends.push(request);
    return inner.append(request);
  };
  events.getExecution = (id) => {
    reads += 1;
    return inner.getExecution(id);
  };
  return { events, appends, summaryReads: () => reads };
}

const steps = (count: number) =>
  defineWorkflow({
    name: `steps-${count}`,
    input: z.object({}),
    async run(ctx) {
      let total = 0;
      for (let i = 0; i < count; i++) {
        ctx.now();
        total = await ctx.step(`s${i}`, () => total + 1);
      }
      return total;
    },
  });

describe.each(backings)('appends per step (adr/0001) on %s', (_name, openBacking) => {
  const h = harness(openBacking);

  it.each([
    [0, 1],
    [1, 2],
    [3, 4],
  ])('a %i-step workflow makes %i appends, and every event is still in the log', async (count, expected) => {
    const { stores } = h.open();
    const { events, appends } = recordingAppends(stores.events);
    const workflow = steps(count);
    const runtime = h.runtime({ stores: withEvents(stores, events), workflows: [workflow] });

    const state = await runtime.execute({ executionId: `a${count}`, workflow: workflow.name, input: {} });

    expect(state.status).toBe('completed');
    expect(appends).toHaveLength(expected);
    const log = await runtime.history(`a${count}`);
    // STARTED, then per step: now(), STEP_STARTED, STEP_COMPLETED; then COMPLETED.
    expect(log).toHaveLength(2 + 3 * count);
    expect(types(log).at(-1)).toBe('EXECUTION_COMPLETED');
    expect(appends.flatMap((a) => a.events.map((e) => e.envelopeId))).toEqual(log.map((e) => e.envelopeId));
  });

  it('execute of a new id reads nothing before seq 0; of an existing one, writes nothing', async () => {
    const { stores } = h.open();
    const { events, appends, summaryReads } = recordingAppends(stores.events);
    const workflow = steps(1);
    const runtime = h.runtime({ stores: withEvents(stores, events), workflows: [workflow] });

    const first = await runtime.execute({ executionId: 'n', workflow: workflow.name, input: {} });
    expect(first.status).toBe('completed');
    expect(summaryReads()).toBe(0);
    expect(appends).toHaveLength(2);

    const log = await runtime.history('n');
    const again = await runtime.execute({ executionId: 'n', workflow: workflow.name, input: {} });
    expect(again).toEqual(first);
    expect(await runtime.history('n')).toEqual(log);
  });

  it('execute without an input (a claim, a recovery) folds the existing execution without asking first', async () => {
    const { stores } = h.open();
    const { events, appends, summaryReads } = recordingAppends(stores.events);
    const workflow = steps(1);
    const runtime = h.runtime({ stores: withEvents(stores, events), workflows: [workflow] });
    await runtime.enqueue(workflow, {}, { executionId: 'queued' });
    const state = await runtime.execute({ executionId: 'queued', workflow: workflow.name });
    expect(state.status).toBe('completed');
    expect(summaryReads()).toBe(0);
    const log = types(await runtime.history('queued'));
    expect(log.slice(0, 2)).toEqual(['EXECUTION_STARTED', 'EXECUTION_RECOVERED']);
    expect(log.at(-1)).toBe('EXECUTION_COMPLETED');
    expect(appends).toHaveLength(3);
    // A missing one is refused as before, with nothing written.
    await expect(runtime.execute({ executionId: 'missing', workflow: workflow.name })).rejects.toBeInstanceOf(
      InvalidInputError,
    );
    expect(await runtime.history('missing')).toEqual([]);
    expect(appends).toHaveLength(3);
  });

  it('a step function runs only after everything before it is durable', async () => {
    const { stores } = h.open();
    const seenAtStepStart: string[][] = [];
    const workflow = defineWorkflow({
      name: 'observe',
      input: z.object({}),
      async run(ctx) {
        for (const name of ['a', 'b']) {
          await ctx.step(name, async () => {
            seenAtStepStart.push(types(await runtime.history('o')));
          });
        }
      },
    });
    const runtime = h.runtime({ stores, workflows: [workflow] });
    await runtime.execute({ executionId: 'o', workflow: 'observe', input: {} });
    expect(seenAtStepStart).toEqual([
      ['EXECUTION_STARTED', 'STEP_STARTED'],
      ['EXECUTION_STARTED', 'STEP_STARTED', 'STEP_COMPLETED', 'STEP_STARTED'],
    ]);
  });
});
