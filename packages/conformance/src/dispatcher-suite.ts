/**
 * `dispatcherSuite`: what every `ExecutionDispatcher` guarantees (docs/architecture.md#dispatch), run against a
 * real runtime: a run to a terminal state, idempotence, failed workflows as outcomes,
 * superseded refusals that surface (never retried), and bad packages refused up front.
 */
import type { ExecutionDispatcher } from '@skein/worker-runtime';
import { type AnyWorkflow, defineWorkflow, type Runtime } from '@skein/workflow-runtime';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { rejectionOf, withStores } from './harness.js';

/** A dispatcher under test, over a fresh runtime on fresh stores. */
export interface DispatcherUnderTest {
  dispatcher: ExecutionDispatcher;
  /** The runtime the dispatcher's workers execute on; the suite reads logs through it. */
  runtime: Runtime;
  /** Close the runtime and the stores. */
  close(): void | Promise<void>;
}

/** Options of {@link dispatcherSuite}. */
export interface DispatcherSuiteOptions {
  /** Names the implementation in test titles. */
  name: string;
  /** A dispatcher whose runtime registers `workflows` (the suite's own), over fresh stores. */
  open: (workflows: readonly AnyWorkflow[]) => DispatcherUnderTest | Promise<DispatcherUnderTest>;
}

/** How often each step's effect ran in this file, by `<executionId>:<step>`. */
const effects = new Map<string, number>();
const ran = (key: string) => effects.set(key, (effects.get(key) ?? 0) + 1);
/** Fences a test takes from inside a step, as another holder would. */
let takeOver: ((executionId: string) => Promise<unknown>) | undefined;

const steps = defineWorkflow({
  name: 'conformance-steps',
  input: z.object({ n: z.number() }),
  async run(ctx, { n }) {
    const a = await ctx.step('a', ({ executionId }) => {
      ran(`${executionId}:a`);
      return n + 1;
    });
    return ctx.step('b', ({ executionId }) => {
      ran(`${executionId}:b`);
      return a * 2;
    });
  },
});
const refuses = defineWorkflow({
  name: 'conformance-refuses',
  input: z.object({}),
  async run(ctx) {
    await ctx.step('a', ({ executionId }) => void ran(`${executionId}:a`));
    throw new Error('refused by the workflow');
  },
});
const contested = defineWorkflow({
  name: 'conformance-contested',
  input: z.object({}),
  async run(ctx) {
    await ctx.step('a', async ({ executionId }) => {
      ran(`${executionId}:a`);
      if (effects.get(`${executionId}:a`) === 1) await takeOver?.(executionId);
    });
    return 'settled';
  },
});
const workflows = [steps, refuses, contested];
/** Suites registered in this file so far: each uses its own execution ids. */
let suites = 0;

/**
 * Register the dispatcher conformance tests in the current vitest file.
 * @example
 * dispatcherSuite({ name: 'LocalDispatcher', open: (workflows) => { ... } });
 */
export function dispatcherSuite({ name, open }: DispatcherSuiteOptions): void {
  const opened = () => open(workflows);
  const suite = ++suites;
  const id = (n: number) => `s${suite}-d-${n}`;
  describe(`${name}: dispatcher`, () => {
    it('dispatches a new execution to completion; the log is the whole run, started once', () =>
      withStores(opened, async ({ dispatcher, runtime }) => {
        const state = await dispatcher.dispatch({
          executionId: id(1),
          workflow: steps.name,
          input: { n: 1 },
        });
        expect(state).toMatchObject({ executionId: id(1), status: 'completed', output: 4 });
        const log = await runtime.history(id(1));
        expect(log.map((e) => e.type)).toEqual([
          'EXECUTION_STARTED',
          'STEP_STARTED',
          'STEP_COMPLETED',
          'STEP_STARTED',
          'STEP_COMPLETED',
          'EXECUTION_COMPLETED',
        ]);
        expect(log.map((e) => e.seq)).toEqual([0, 1, 2, 3, 4, 5]);
      }));

    it('dispatching a terminal execution again returns it and writes nothing', () =>
      withStores(opened, async ({ dispatcher, runtime }) => {
        const first = await dispatcher.dispatch({
          executionId: id(2),
          workflow: steps.name,
          input: { n: 2 },
        });
        const again = await dispatcher.dispatch({
          executionId: id(2),
          workflow: steps.name,
          input: { n: 2 },
        });
        expect(again.output).toBe(first.output);
        expect(await runtime.history(id(2))).toHaveLength(6);
        expect(effects.get(`${id(2)}:a`)).toBe(1);
      }));

    it('a workflow that ends failed is an outcome: returned, not retried', () =>
      withStores(opened, async ({ dispatcher, runtime }) => {
        const state = await dispatcher.dispatch({ executionId: id(3), workflow: refuses.name, input: {} });
        expect(state.status).toBe('failed');
        const types = (await runtime.history(id(3))).map((e) => e.type);
        expect(types.filter((t) => t === 'EXECUTION_STARTED')).toHaveLength(1);
        expect(types).not.toContain('EXECUTION_RECOVERED');
        expect(effects.get(`${id(3)}:a`)).toBe(1);
      }));

    it('a superseded refusal surfaces as ExecutionSupersededError, is not retried, and the outcome is awaited by id', () =>
      withStores(opened, async ({ dispatcher, runtime }) => {
        takeOver = (id) => runtime.stores.events.acquireFence(id);
        const error = await rejectionOf(
          dispatcher.dispatch({ executionId: id(4), workflow: contested.name, input: {} }),
        );
        expect(error.name).toBe('ExecutionSupersededError');
        expect((error as Error & { executionId?: string }).executionId).toBe(id(4));
        const fence = await runtime.stores.events.currentFence(id(4));
        // Not retried: nobody took a fence after the holder that superseded it.
        expect(fence).toBe((await runtime.history(id(4)))[0]!.fence + 1);
        expect(effects.get(`${id(4)}:a`)).toBe(1);
        // The new holder finishes it; the refused caller awaits the outcome by id.
        const [, outcome] = await Promise.all([
          runtime.execute({ executionId: id(4), workflow: contested.name }),
          runtime.handle(id(4)).result(),
        ]);
        expect(outcome).toBe('settled');
      }));

    it('L7: a bad package is refused before anything is written', () =>
      withStores(opened, async ({ dispatcher, runtime }) => {
        const error = await rejectionOf(dispatcher.dispatch({ executionId: '', workflow: steps.name }));
        expect(error.name).toBe('InvalidInputError');
        expect(error.message).toContain('executionId');
        const unknown = await rejectionOf(dispatcher.dispatch({ executionId: id(5), workflow: 'nope' }));
        expect(unknown.name).not.toBe('ExecutionSupersededError');
        expect(await runtime.history(id(5))).toEqual([]);
        expect((await runtime.stores.events.listExecutions()).items).toEqual([]);
      }));
  });
}
