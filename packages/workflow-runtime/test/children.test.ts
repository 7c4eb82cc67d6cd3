/**
 * Issue #5, children: `ctx.child` starts a child once at a deterministic id, records
 * `CHILD_STARTED` after the child's seq 0 is durable and `CHILD_SETTLED` when it observes the
 * child's end; the parent suspends meanwhile and is woken by the child's end, with a periodic
 * re-check timer as the fallback for a lost wake-up.
 */
import {
  ChildFailedError,
  defineWorkflow,
  ExecutionAlreadyExistsError,
  readHistory,
  UnknownWorkflowError,
} from '@skein/workflow-runtime';
import { defaultChildId } from '@skein/workflow-runtime/internal';
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import {
  backings,
  CrashingEventStore,
  harness,
  payloadOf,
  types,
  until,
  withEvents,
} from './support/stores.js';

const T0 = Date.UTC(2026, 5, 1);

function family() {
  const ran: string[] = [];
  const child = defineWorkflow({
    name: 'child',
    input: z.object({ n: z.number() }),
    signals: { go: z.boolean() },
    async run(ctx, { n }) {
      await ctx.step('child-work', () => ran.push(`child-work ${n}`));
      const go = await ctx.waitForSignal<boolean>('go');
      if (!go) throw new Error('told to stop');
      return n * 10;
    },
  });
  const parent = defineWorkflow({
    name: 'parent',
    input: z.null(),
    async run(ctx) {
      try {
        const out = await ctx.child(child, { n: 4 });
        return await ctx.step('use', () => `child said ${out}`);
      } catch (error) {
        if (error instanceof ChildFailedError) return `child ${error.status}`;
        throw error;
      }
    },
  });
  return { child, parent, ran };
}

describe.each(backings)('children (%s store)', (_, open) => {
  const h = harness(open);

  test('the parent starts the child once, suspends while it runs, and is woken by its end', async () => {
    const { stores } = h.open();
    const { child, parent, ran } = family();
    const runtime = h.runtime({ stores, workflows: [parent, child] });
    const handle = await runtime.start(parent, null, { executionId: 'p' });
    const childId = defaultChildId('p', 0);
    await until(async () => (await runtime.loadState('p'))?.status === 'suspended');
    await until(async () => (await runtime.loadState(childId))?.status === 'suspended');

    const parentLog = await runtime.history('p');
    expect(types(parentLog)).toEqual([
      'EXECUTION_STARTED',
      'CHILD_STARTED',
      'TIMER_SCHEDULED',
      'EXECUTION_SUSPENDED',
    ]);
    expect(payloadOf(parentLog[1])).toEqual({ position: 0, name: 'child', childId, version: 1 });
    expect(payloadOf(parentLog[2])).toMatchObject({ purpose: 'child' });
    expect(payloadOf(parentLog[3])).toMatchObject({ reason: 'waiting for a child', children: [childId] });
    const childLog = await runtime.history(childId);
    expect(payloadOf(childLog[0])).toMatchObject({ workflow: 'child', parentId: 'p', input: { n: 4 } });
    expect(childLog[0]!.recordedAt.getTime()).toBeLessThanOrEqual(parentLog[1]!.recordedAt.getTime());

    await runtime.signal(childId, 'go', true);
    expect(await handle.result()).toBe('child said 40');
    const done = await runtime.history('p');
    expect(types(done).slice(4)).toEqual([
      'EXECUTION_RESUMED',
      'TIMER_FIRED',
      'CHILD_SETTLED',
      'STEP_STARTED',
      'STEP_COMPLETED',
      'EXECUTION_COMPLETED',
    ]);
    expect(payloadOf(done[6])).toEqual({ position: 0, childId, status: 'completed', output: 40 });
    expect(ran).toEqual(['child-work 4']);
    expect(await stores.timers.forExecution('p')).toEqual([]);
  });

  test('a child that fails reaches the parent as ChildFailedError, which it may catch', async () => {
    const { stores } = h.open();
    const { child, parent } = family();
    const runtime = h.runtime({ stores, workflows: [parent, child] });
    const handle = await runtime.start(parent, null, { executionId: 'pf' });
    await until(async () => (await runtime.loadState(defaultChildId('pf', 0)))?.status === 'suspended');
    await runtime.signal(defaultChildId('pf', 0), 'go', false);
    expect(await handle.result()).toBe('child failed');
    const settled = (await runtime.history('pf')).find((e) => e.type === 'CHILD_SETTLED');
    expect(payloadOf(settled)).toMatchObject({ status: 'failed', error: { message: 'told to stop' } });
  });

  test('recovering the parent after a crash between the child’s start and CHILD_STARTED never starts a second child', async () => {
    const { stores } = h.open();
    const { child, parent, ran } = family();
    // Appends: parent [STARTED]; child [STARTED, STEP_STARTED]; the next append dies.
    const doomed = h.runtime({
      stores: withEvents(stores, new CrashingEventStore(stores.events, 2)),
      workflows: [parent, child],
    });
    await expect(doomed.execute({ executionId: 'pc', workflow: 'parent', input: null })).rejects.toThrow(
      /simulated crash/,
    );
    await until(async () => doomed.activeExecutions().length === 0);
    await doomed.close();
    const childId = defaultChildId('pc', 0);
    expect(types(await readHistory(stores.events, 'pc'))).toEqual(['EXECUTION_STARTED']);
    expect(types(await readHistory(stores.events, childId))).toEqual(['EXECUTION_STARTED', 'STEP_STARTED']);

    const runtime = h.runtime({ stores, workflows: [parent, child] });
    // The child is recovered on its own (here by execute; a supervisor does it in production).
    expect(await runtime.execute({ executionId: childId, workflow: 'child' })).toMatchObject({
      status: 'suspended',
    });
    expect(await runtime.execute({ executionId: 'pc', workflow: 'parent' })).toMatchObject({
      status: 'suspended',
    });
    const page = await runtime.list();
    expect(page.items.map((item) => item.executionId)).toEqual(['pc', childId]);
    expect(types(await runtime.history(childId)).filter((t) => t === 'EXECUTION_STARTED')).toHaveLength(1);

    await runtime.signal(childId, 'go', true);
    expect(await runtime.result('pc')).toBe('child said 40');
    expect(ran).toEqual(['child-work 4', 'child-work 4']);
    expect(types(await runtime.history('pc')).filter((t) => t === 'CHILD_STARTED')).toHaveLength(1);
  });

  test('a lost wake-up: the parent’s re-check timer notices the child’s end', async () => {
    const backing = h.open();
    const { child, parent } = family();
    let now = T0;
    const clock = () => now;
    const first = h.runtime({
      stores: backing.stores,
      workflows: [parent, child],
      clock,
      childRecheckMs: 5_000,
    });
    await first.start(parent, null, { executionId: 'lost' });
    const childId = defaultChildId('lost', 0);
    await until(async () => (await first.loadState(childId))?.status === 'suspended');
    await until(async () => (await first.loadState('lost'))?.status === 'suspended');
    await first.close();

    // A node that runs only the child: it cannot resume the parent, so the wake-up is lost.
    const childNode = h.runtime({ stores: backing.reopen(), workflows: [child], clock });
    await childNode.signal(childId, 'go', true);
    expect(await childNode.result(childId)).toBe(40);
    await until(() => h.backgroundErrors.length > 0);
    expect(h.backgroundErrors[0]).toBeInstanceOf(UnknownWorkflowError);
    expect((await childNode.loadState('lost'))?.status).toBe('suspended');

    const parentNode = h.runtime({ stores: backing.reopen(), workflows: [parent, child], clock });
    now = T0 + 4_999;
    expect(await parentNode.wake('lost')).toMatchObject({ status: 'suspended' });
    now = T0 + 5_000;
    expect(await parentNode.wake('lost')).toMatchObject({ status: 'completed', output: 'child said 40' });
  });

  test('cancelling the parent cancels the child it waits on', async () => {
    const { stores } = h.open();
    const { child, parent } = family();
    const runtime = h.runtime({ stores, workflows: [parent, child] });
    await runtime.start(parent, null, { executionId: 'pk' });
    const childId = defaultChildId('pk', 0);
    await until(async () => (await runtime.loadState(childId))?.status === 'suspended');
    await until(async () => (await runtime.loadState('pk'))?.status === 'suspended');

    await runtime.cancel('pk', 'order withdrawn');
    await expect(runtime.result('pk')).rejects.toThrow(/ended cancelled/);
    await expect(runtime.result(childId)).rejects.toThrow(/ended cancelled/);
    const requested = (await runtime.history(childId)).find((e) => e.type === 'CANCEL_REQUESTED');
    expect(payloadOf<{ reason: string }>(requested).reason).toBe(
      'parent "pk" was cancelled: order withdrawn',
    );
  });

  test('15.3: a child id is scoped to its parent: an execution of the same workflow there is refused, never adopted', async () => {
    const { stores } = h.open();
    const { child } = family();
    const caught: unknown[] = [];
    const parent = defineWorkflow({
      name: 'adopting-parent',
      input: z.object({ id: z.string().optional() }),
      async run(ctx, { id }) {
        try {
          return await ctx.child(child, { n: 1 }, id === undefined ? {} : { executionId: id });
        } catch (error) {
          caught.push(error);
          return 'refused';
        }
      },
    });
    const runtime = h.runtime({ stores, workflows: [parent, child] });
    /** Where the parent stops: 'completed' when refused, 'suspended' when it adopted the child. */
    const settle = async (input: { id?: string }, executionId: string) => {
      await runtime.start(parent, input, { executionId });
      await until(async () =>
        ['completed', 'suspended'].includes(`${(await runtime.loadState(executionId))?.status}`),
      );
      return runtime.loadState(executionId);
    };
    // Someone started the child workflow at the id the parent's first child gets by default.
    await runtime.start(child, { n: 40 }, { executionId: 'ap-child-0' });
    expect(await settle({}, 'ap')).toMatchObject({ status: 'completed', output: 'refused' });
    // And one parent's named child is no other parent's to adopt.
    expect(await settle({ id: 'named' }, 'first')).toMatchObject({ status: 'suspended' });
    expect(await settle({ id: 'named' }, 'second')).toMatchObject({ status: 'completed', output: 'refused' });
    expect(caught.map((error) => (error as Error).message)).toEqual([
      'execution "ap-child-0" already exists (workflow "child"): it is not a child of "ap"',
      'execution "named" already exists (workflow "child"): it is a child of "first", not of "second"',
    ]);
    for (const error of caught) expect(error).toBeInstanceOf(ExecutionAlreadyExistsError);
    expect(types(await runtime.history('ap'))).toEqual(['EXECUTION_STARTED', 'EXECUTION_COMPLETED']);
    expect((await runtime.loadState('ap-child-0'))?.parentId).toBeUndefined();
    expect((await runtime.loadState('named'))?.parentId).toBe('first');
  });

  test('a child id that is no execution id is refused with what is wrong with it', async () => {
    const { stores } = h.open();
    const { child } = family();
    const ids = ['', 'x'.repeat(256), `lone-\uD800`];
    const parent = defineWorkflow({
      name: 'bad-id-parent',
      input: z.object({}),
      async run(ctx) {
        const messages: string[] = [];
        for (const executionId of ids) {
          try {
            await ctx.child(child, { n: 1 }, { executionId });
          } catch (error) {
            messages.push(`${(error as Error).name}: ${(error as Error).message}`);
          }
        }
        return messages;
      },
    });
    const runtime = h.runtime({ stores, workflows: [parent, child] });
    await runtime.start(parent, {}, { executionId: 'bad-ids' });
    await until(async () => (await runtime.loadState('bad-ids'))?.status === 'completed');
    expect((await runtime.loadState('bad-ids'))?.output).toEqual([
      'InvalidInputError: ctx.child options is invalid: executionId: must be 1 to 255 characters, got ""',
      `InvalidInputError: ctx.child options is invalid: executionId: must be 1 to 255 characters, got "${'x'.repeat(256)}"`,
      'InvalidInputError: ctx.child options is invalid: executionId: must be well-formed Unicode, but has a lone surrogate (U+D800) at index 5, which cannot be stored',
    ]);
  });

  test('a child id taken by another workflow fails the call with ExecutionAlreadyExistsError', async () => {
    const { stores } = h.open();
    const { child } = family();
    const squatter = defineWorkflow({ name: 'squatter', input: z.null(), run: async () => 'here first' });
    const caught: unknown[] = [];
    const parent = defineWorkflow({
      name: 'named-parent',
      input: z.null(),
      async run(ctx) {
        try {
          return await ctx.child(child, { n: 1 }, { executionId: 'taken' });
        } catch (error) {
          caught.push(error);
          return 'refused';
        }
      },
    });
    const runtime = h.runtime({ stores, workflows: [parent, child, squatter] });
    await (await runtime.start(squatter, null, { executionId: 'taken' })).result();
    expect(await (await runtime.start(parent, null, { executionId: 'np' })).result()).toBe('refused');
    expect(caught[0]).toBeInstanceOf(ExecutionAlreadyExistsError);
    expect(types(await runtime.history('np'))).toEqual(['EXECUTION_STARTED', 'EXECUTION_COMPLETED']);
  });
});
