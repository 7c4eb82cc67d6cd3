/**
 * Steps that declare a destination hold a share while an attempt runs (adr/0057): running
 * steps of several executions share the runtime's capacities, a lowered capacity reaches them
 * while they run, the share goes when the attempt ends, and the log is the same as without it.
 */
import { defineWorkflow, InvalidInputError, UnknownDestinationError } from '@skein/workflow-runtime';
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { backings, deferred, harness, types, until } from './support/stores.js';

describe.each(backings)('steps with a destination (%s store)', (_, open) => {
  const h = harness(open);

  function caller() {
    const gate = deferred();
    const seen: Record<string, number[]> = {};
    const workflow = defineWorkflow({
      name: 'caller',
      input: z.object({ tag: z.string(), destination: z.string() }),
      async run(ctx, input) {
        return ctx.step(
          'call',
          async (info) => {
            const shares: number[] = [];
            seen[input.tag] = shares;
            shares.push(info.share!());
            await gate.promise;
            shares.push(info.share!());
            return input.tag;
          },
          { destination: input.destination },
        );
      },
    });
    return { workflow, gate, seen };
  }

  test('running steps share the capacities; a lowered capacity reaches them; the share goes at the end', async () => {
    const { stores } = h.open();
    const { workflow, gate, seen } = caller();
    const runtime = h.runtime({
      stores,
      workflows: [workflow],
      destinations: { capacity: 30, perDestination: { api: 6 } },
    });
    const handles = [
      await runtime.start(workflow, { tag: 'a', destination: 'api' }, { executionId: 'a' }),
      await runtime.start(workflow, { tag: 'b', destination: 'api' }, { executionId: 'b' }),
      await runtime.start(workflow, { tag: 'c', destination: 'db' }, { executionId: 'c' }),
    ];
    await until(() => Object.keys(seen).length === 3);
    expect(runtime.destinations.runningSteps('api')).toBe(2);
    expect(runtime.destinations.share('api')).toBe(3); // min(6 / 2, 30 / 3)
    expect(runtime.destinations.share('db')).toBe(10); // 30 / 3
    runtime.destinations.setDestinationCapacity('api', 2);
    runtime.destinations.setCapacity(6);
    gate.resolve();
    expect(await Promise.all(handles.map((handle) => handle.result()))).toEqual(['a', 'b', 'c']);
    // Each step read its share as it started and again after the capacities were lowered.
    expect(seen.a![1]).toBe(1); // min(2 / 2, 6 / 3)
    expect(seen.c![1]).toBe(2); // 6 / 3
    expect(seen.a![0]).toBeGreaterThan(seen.a![1]!);
    expect(() => runtime.destinations.share('api')).toThrow(UnknownDestinationError);
    expect(runtime.destinations.runningSteps('api')).toBe(0);
    // Nothing of the share is in the log.
    expect(types(await runtime.history('a'))).toEqual([
      'EXECUTION_STARTED',
      'STEP_STARTED',
      'STEP_COMPLETED',
      'EXECUTION_COMPLETED',
    ]);
  });

  test('a step without a destination has no share; a bad destination is refused at the call', async () => {
    const { stores } = h.open();
    const seen: unknown[] = [];
    const workflow = defineWorkflow({
      name: 'plain',
      input: z.object({ destination: z.string().optional() }),
      async run(ctx, input) {
        await ctx.step('plain', (info) => {
          seen.push(info.share);
        });
        return ctx.step('bad', () => 'ran', { destination: input.destination ?? '' });
      },
    });
    const runtime = h.runtime({ stores, workflows: [workflow] });
    const handle = await runtime.start(workflow, {}, { executionId: 'p' });
    await expect(handle.result()).rejects.toThrow();
    expect(seen).toEqual([undefined]);
    const state = await runtime.loadState('p');
    expect(state?.status).toBe('failed');
    expect(JSON.stringify(state?.error)).toContain('options is invalid: destination');
    expect(() => h.runtime({ stores, workflows: [workflow], destinations: { capacity: -1 } })).toThrow(
      InvalidInputError,
    );
  });
});
