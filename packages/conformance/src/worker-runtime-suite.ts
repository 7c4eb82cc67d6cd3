/**
 * `workerRuntimeSuite`: what every `WorkerRuntime` guarantees (docs/architecture.md#dispatch, #http-worker), run against a
 * real runtime: a new fence per attempt, execution under the lease's fence, idempotence,
 * superseded refusals for stale leases and start-only retries, failed workflows as outcomes,
 * codec values end to end, and bad packages refused before anything is written.
 */
import { isSupersededRefusal, type WorkerRuntime } from '@skein/worker-runtime';
import { type AnyWorkflow, defineWorkflow, type Runtime } from '@skein/workflow-runtime';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { rejectionOf, withStores } from './harness.js';

/** A worker runtime under test, over a fresh runtime on fresh stores. */
export interface WorkerRuntimeUnderTest {
  workers: WorkerRuntime;
  /** The runtime the workers execute on; the suite reads logs and fences through it. */
  runtime: Runtime;
  /** Close the workers, the runtime and the stores. */
  close(): void | Promise<void>;
}

/** Options of {@link workerRuntimeSuite}. */
export interface WorkerRuntimeSuiteOptions {
  /** Names the implementation in test titles. */
  name: string;
  /** Workers whose runtime registers `workflows` (the suite's own), over fresh stores. */
  open: (workflows: readonly AnyWorkflow[]) => WorkerRuntimeUnderTest | Promise<WorkerRuntimeUnderTest>;
}

/** How often each step's effect ran in this file, by `<executionId>:<step>`. */
const effects = new Map<string, number>();
const ran = (key: string) => effects.set(key, (effects.get(key) ?? 0) + 1);

const steps = defineWorkflow({
  name: 'wr-steps',
  input: z.object({ n: z.number() }),
  async run(ctx, { n }) {
    const a = await ctx.step('a', ({ executionId }) => {
      ran(`${executionId}:a`);
      return n + 1;
    });
    return ctx.step('b', () => a * 2);
  },
});
const refuses = defineWorkflow({
  name: 'wr-refuses',
  input: z.object({}),
  async run() {
    throw new Error('refused by the workflow');
  },
});
const values = defineWorkflow({
  name: 'wr-values',
  input: z.object({ at: z.date(), big: z.bigint() }),
  async run(ctx, { at, big }) {
    return ctx.step('pack', () => ({ at, big: big + 1n, tags: new Map([['k', new Set([1, 2])]]) }));
  },
});
const workflows = [steps, refuses, values];
/** Suites registered in this file so far: each uses its own execution ids. */
let suites = 0;

/** Call `fn` and return its rejection, also when it throws before returning a promise. */
const refusal = (fn: () => Promise<unknown>) => rejectionOf((async () => fn())());

/**
 * Register the worker-runtime conformance tests in the current vitest file.
 * @example
 * workerRuntimeSuite({ name: 'LocalWorkerRuntime', open: (workflows) => { ... } });
 */
export function workerRuntimeSuite({ name, open }: WorkerRuntimeSuiteOptions): void {
  const opened = () => open(workflows);
  const suite = ++suites;
  const id = (n: number) => `s${suite}-w-${n}`;
  describe(`${name}: worker runtime`, () => {
    it('L3: allocate takes a strictly larger fence for every attempt, also before seq 0 exists', () =>
      withStores(opened, async ({ workers, runtime }) => {
        const pkg = { executionId: id(1), workflow: steps.name, input: { n: 1 } };
        const fences = [];
        for (let i = 0; i < 3; i++) fences.push((await workers.allocate(pkg)).fence);
        expect(fences[1]).toBeGreaterThan(fences[0]!);
        expect(fences[2]).toBeGreaterThan(fences[1]!);
        expect(await runtime.stores.events.currentFence(id(1))).toBe(fences[2]);
        expect(await runtime.history(id(1))).toEqual([]);
      }));

    it("execute runs a new execution under the lease's fence: every event carries it", () =>
      withStores(opened, async ({ workers, runtime }) => {
        const pkg = { executionId: id(2), workflow: steps.name, input: { n: 1 } };
        const lease = await workers.allocate(pkg);
        expect(lease.executionId).toBe(id(2));
        const state = await workers.execute(lease, pkg);
        await workers.release(lease);
        expect(state).toMatchObject({ executionId: id(2), status: 'completed', output: 4 });
        const log = await runtime.history(id(2));
        expect(log.map((e) => e.type)).toEqual([
          'EXECUTION_STARTED',
          'STEP_STARTED',
          'STEP_COMPLETED',
          'STEP_STARTED',
          'STEP_COMPLETED',
          'EXECUTION_COMPLETED',
        ]);
        expect(log.map((e) => e.fence)).toEqual(log.map(() => lease.fence));
      }));

    it('executing a terminal execution again returns its state and writes nothing', () =>
      withStores(opened, async ({ workers, runtime }) => {
        const pkg = { executionId: id(3), workflow: steps.name, input: { n: 2 } };
        const first = await workers.execute(await workers.allocate(pkg), pkg);
        const log = await runtime.history(id(3));
        const again = await workers.execute(await workers.allocate(pkg), pkg);
        expect(again).toMatchObject({ status: 'completed', output: first.output, sequence: first.sequence });
        expect(await runtime.history(id(3))).toEqual(log);
        expect(effects.get(`${id(3)}:a`)).toBe(1);
      }));

    it('L3: a lease older than the newest fence is a superseded refusal and writes nothing; the newer one takes over', () =>
      withStores(opened, async ({ workers, runtime }) => {
        await runtime.enqueue(steps, { n: 3 }, { executionId: id(4) });
        const pkg = { executionId: id(4), workflow: steps.name, input: { n: 3 } };
        const older = await workers.allocate(pkg);
        const newer = await workers.allocate(pkg);
        const error = await refusal(() => workers.execute(older, pkg));
        expect(isSupersededRefusal(error, id(4))).toBe(true);
        expect((await runtime.history(id(4))).map((e) => e.type)).toEqual(['EXECUTION_STARTED']);
        expect(effects.get(`${id(4)}:a`)).toBeUndefined();
        const state = await workers.execute(newer, pkg);
        expect(state).toMatchObject({ status: 'completed', output: 8 });
        const recovered = (await runtime.history(id(4))).find((e) => e.type === 'EXECUTION_RECOVERED');
        expect(recovered?.fence).toBe(newer.fence);
      }));

    it('a start-only package on an existing execution is a superseded refusal and writes nothing', () =>
      withStores(opened, async ({ workers, runtime }) => {
        await runtime.enqueue(steps, { n: 1 }, { executionId: id(5) });
        const pkg = { executionId: id(5), workflow: steps.name, input: { n: 1 }, startOnly: true };
        const lease = await workers.allocate(pkg);
        const error = await refusal(() => workers.execute(lease, pkg));
        expect(isSupersededRefusal(error, id(5))).toBe(true);
        expect((await runtime.history(id(5))).map((e) => e.type)).toEqual(['EXECUTION_STARTED']);
      }));

    it('a workflow that ends failed is an outcome: a failed state, not a rejection', () =>
      withStores(opened, async ({ workers, runtime }) => {
        const pkg = { executionId: id(6), workflow: refuses.name, input: {} };
        const state = await workers.execute(await workers.allocate(pkg), pkg);
        expect(state.status).toBe('failed');
        expect((await runtime.history(id(6))).map((e) => e.type).at(-1)).toBe('EXECUTION_FAILED');
      }));

    it('codec values (Date, BigInt, Map, Set) in input and output keep their types', () =>
      withStores(opened, async ({ workers }) => {
        const pkg = { executionId: id(7), workflow: values.name, input: { at: new Date(5), big: 41n } };
        const state = await workers.execute(await workers.allocate(pkg), pkg);
        expect(state.output).toEqual({ at: new Date(5), big: 42n, tags: new Map([['k', new Set([1, 2])]]) });
        expect(state.input).toEqual({ at: new Date(5), big: 41n });
      }));

    it('L7: a bad package, a lease of another execution and an unknown workflow are refused before anything is written', () =>
      withStores(opened, async ({ workers, runtime }) => {
        const bad = await refusal(() => workers.allocate({ executionId: '', workflow: steps.name }));
        expect(bad.name).toBe('InvalidInputError');
        expect(bad.message).toContain('executionId');
        const pkg = { executionId: id(8), workflow: steps.name, input: { n: 1 } };
        const lease = await workers.allocate({ ...pkg, executionId: id(9) });
        const mismatch = await refusal(() => workers.execute(lease, pkg));
        expect(isSupersededRefusal(mismatch, id(8))).toBe(false);
        const badInput = await refusal(async () =>
          workers.execute(await workers.allocate(pkg), { ...pkg, input: { n: 'one' } }),
        );
        expect(badInput.message).toContain('input.n');
        const unknown = { executionId: id(10), workflow: 'wr-nope' };
        const missing = await refusal(async () => workers.execute(await workers.allocate(unknown), unknown));
        expect(isSupersededRefusal(missing, id(10))).toBe(false);
        expect(missing.message).toContain('wr-nope');
        for (const n of [8, 9, 10]) expect(await runtime.history(id(n))).toEqual([]);
        expect(await runtime.stores.events.getExecution(id(8))).toBeNull();
      }));

    it('L3: allocate takes no fence for a package no execute could run', () =>
      withStores(opened, async ({ workers, runtime }) => {
        const { events } = runtime.stores;
        const refusals = [
          { executionId: id(11), workflow: 'wr-nope', input: {} },
          { executionId: id(12), workflow: steps.name },
          { executionId: id(13), workflow: steps.name, input: { n: 'one' } },
        ];
        for (const pkg of refusals) {
          await refusal(() => workers.allocate(pkg));
          expect(await events.currentFence(pkg.executionId), pkg.executionId).toBe(0);
          expect(await events.getExecution(pkg.executionId)).toBeNull();
        }
        // An existing execution of another workflow: a fence would fence out its holder.
        const pkg = { executionId: id(14), workflow: steps.name, input: { n: 1 } };
        await workers.execute(await workers.allocate(pkg), pkg);
        const fence = await events.currentFence(id(14));
        await refusal(() => workers.allocate({ executionId: id(14), workflow: refuses.name }));
        expect(await events.currentFence(id(14))).toBe(fence);
        // An existing execution needs no input (a recovery's dispatch).
        const again = await workers.allocate({ executionId: id(14), workflow: steps.name });
        expect(again.fence).toBeGreaterThan(fence);
      }));
  });
}
