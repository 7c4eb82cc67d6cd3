/**
 * Random concurrent workflows: a tree of branches run in sequence, with `Promise.all` or with
 * `Promise.race`, whose leaves are steps (failing some attempts, retried with a backoff, some
 * failures caught and some not), durable sleeps, signal waits (with and without a timeout, some
 * signals never sent) and child executions (which may fail). Each plan prints as a short
 * phrase, and `conforms` says whether an output is one the plan can give, so a property test
 * can check every crash outcome against the plan, not only against the uncrashed run.
 */
import {
  type AnyWorkflow,
  ChildFailedError,
  defineWorkflow,
  StepFailedError,
  type WorkflowContext,
} from '@skein/workflow-runtime';
import fc from 'fast-check';
import { z } from 'zod';
import type { Effects } from './effects.js';

/**
 * A step that fails its first `failures` attempts under `maxAttempts`; `caught`: its final
 * failure is caught where it happens. Each attempt takes `turns` turns of the event loop
 * (`setImmediate`), so siblings are in flight together and settle out of call order, the same
 * way in every run.
 */
export interface StepBranch {
  kind: 'step';
  failures: number;
  maxAttempts: number;
  caught: boolean;
  turns: number;
}
/** `ctx.sleep` for `ms` (virtual) milliseconds. */
export interface SleepBranch {
  kind: 'sleep';
  ms: number;
}
/** `ctx.waitForSignal`; `sent`: the driver sends it when the execution waits; unsent ones have a timeout. */
export interface SignalBranch {
  kind: 'signal';
  sent: boolean;
  timeoutMs?: number;
}
/** `ctx.child` of a workflow with one step failing its first `failures` of `maxAttempts`. */
export interface ChildBranch {
  kind: 'child';
  failures: number;
  maxAttempts: number;
}
/** Branches run one after another (`seq`), at once with `Promise.all`, or raced with `Promise.race`. */
export interface GroupBranch {
  kind: 'seq' | 'all' | 'race';
  branches: Branch[];
}
/** One node of a concurrent workflow's plan. */
export type Branch = StepBranch | SleepBranch | SignalBranch | ChildBranch | GroupBranch;

/** Bounds of {@link concurrentWorkflowArb}. */
export interface ConcurrentWorkflowArbOptions {
  /** Deepest nesting of groups (default: 3). */
  maxDepth?: number;
  /** Most branches of a group (default: 3). */
  maxBranches?: number;
}

/** A concurrent workflow built from a plan, with what the crash runner needs to drive it. */
export interface ConcurrentWorkflow {
  plan: Branch;
  /** The workflow under test (pass it to `crashAtEveryWrite`). */
  workflow: (effects: Effects) => AnyWorkflow;
  /** The child workflow it starts (pass it as the crash options' `workflows`). */
  workflows: ((effects: Effects) => AnyWorkflow)[];
  /** The signals the driver sends when the execution waits for them (the crash options' `signals`). */
  signals: Record<string, unknown>;
  /** True when `output` is one the plan can give. */
  conforms(output: unknown): boolean;
}

const leafArb: fc.Arbitrary<Branch> = fc.oneof(
  fc.record({
    kind: fc.constant('step' as const),
    failures: fc.integer({ min: 0, max: 2 }),
    maxAttempts: fc.integer({ min: 1, max: 3 }),
    caught: fc.boolean(),
    turns: fc.integer({ min: 0, max: 3 }),
  }),
  fc.record({ kind: fc.constant('sleep' as const), ms: fc.integer({ min: 0, max: 5_000 }) }),
  fc.oneof(
    fc.record({ kind: fc.constant('signal' as const), sent: fc.constant(true) }),
    fc.record({
      kind: fc.constant('signal' as const),
      sent: fc.boolean(),
      timeoutMs: fc.integer({ min: 1, max: 5_000 }),
    }),
  ),
  fc.record({
    kind: fc.constant('child' as const),
    failures: fc.integer({ min: 0, max: 2 }),
    maxAttempts: fc.integer({ min: 1, max: 2 }),
  }),
);

/**
 * Plans of random concurrent workflows; the root is a group.
 * @example
 * fc.assert(fc.asyncProperty(concurrentWorkflowArb(), async (plan) => {
 *   const model = concurrentWorkflow(plan);
 *   const report = await crashAtEveryWrite(model.workflow, null, { workflows: model.workflows, signals: model.signals });
 *   expect(model.conforms(report.reference.output)).toBe(true);
 * }));
 */
export function concurrentWorkflowArb(options: ConcurrentWorkflowArbOptions = {}): fc.Arbitrary<Branch> {
  const maxDepth = options.maxDepth ?? 3;
  const maxBranches = options.maxBranches ?? 3;
  const group = (depth: number): fc.Arbitrary<Branch> =>
    fc.record({
      kind: fc.constantFrom('seq' as const, 'all' as const, 'race' as const),
      branches: fc.array(depth >= maxDepth ? leafArb : fc.oneof(leafArb, leafArb, group(depth + 1)), {
        minLength: 1,
        maxLength: maxBranches,
      }),
    });
  return group(1).map(printable);
}

/** What a plan prints as: `all(step 1/2, race(sleep 30, signal), child)`. */
export function describePlan(branch: Branch): string {
  switch (branch.kind) {
    case 'step':
      return `step ${branch.failures}/${branch.maxAttempts}${branch.caught ? '' : '!'} ~${branch.turns}`;
    case 'sleep':
      return `sleep ${branch.ms}`;
    case 'signal':
      return `signal${branch.sent ? '' : ' unsent'}${branch.timeoutMs === undefined ? '' : ` ${branch.timeoutMs}`}`;
    case 'child':
      return `child ${branch.failures}/${branch.maxAttempts}`;
    default:
      return `${branch.kind}(${branch.branches.map(describePlan).join(', ')})`;
  }
}

function printable(plan: Branch): Branch {
  Object.defineProperty(plan, fc.toStringMethod, { value: () => describePlan(plan), enumerable: false });
  return plan;
}

/** A plan's nodes numbered depth first: names in the workflow are unique. */
function numbered(plan: Branch): Map<Branch, number> {
  const ids = new Map<Branch, number>();
  const visit = (branch: Branch) => {
    ids.set(branch, ids.size);
    if ('branches' in branch) for (const inner of branch.branches) visit(inner);
  };
  visit(plan);
  return ids;
}

/** Build the workflow a plan describes (see the module comment). */
export function concurrentWorkflow(plan: Branch): ConcurrentWorkflow {
  const ids = numbered(plan);
  const signals: Record<string, unknown> = {};
  for (const [branch, id] of ids) if (branch.kind === 'signal' && branch.sent) signals[`g${id}`] = `g${id}`;
  const child = (effects: Effects) =>
    defineWorkflow({
      name: 'concurrent-child',
      version: 1,
      input: z.object({ id: z.number(), failures: z.number(), maxAttempts: z.number() }),
      run: (ctx, input) =>
        ctx.step(
          `c${input.id}`,
          effects.track(`c${input.id}`, (info) => {
            if (info.attempt <= input.failures)
              throw new Error(`c${input.id}: attempt ${info.attempt} fails`);
            return `c${input.id}:${info.attempt}`;
          }),
          { retry: { maxAttempts: input.maxAttempts, initialMs: 5 } },
        ),
    });
  const workflow = (effects: Effects) => {
    const childDefinition = child(effects);
    return defineWorkflow({
      name: 'concurrent',
      version: 1,
      input: z.null(),
      signals: Object.fromEntries(
        [...ids].filter(([branch]) => branch.kind === 'signal').map(([, id]) => [`g${id}`, z.string()]),
      ),
      run: (ctx) => runBranch({ ctx, effects, ids, child: childDefinition }, plan),
    });
  };
  return {
    plan,
    workflow,
    workflows: [child],
    signals,
    conforms: (output) => conforms(plan, ids, output),
  };
}

interface Scope {
  ctx: WorkflowContext;
  effects: Effects;
  ids: Map<Branch, number>;
  child: AnyWorkflow;
}

async function runBranch(scope: Scope, branch: Branch): Promise<unknown> {
  const { ctx, effects } = scope;
  const id = scope.ids.get(branch)!;
  switch (branch.kind) {
    case 'step': {
      const name = `s${id}`;
      const attempt = effects.track(name, async (info) => {
        for (let turn = 0; turn < branch.turns; turn++) await new Promise((resolve) => setImmediate(resolve));
        if (info.attempt <= branch.failures) throw new Error(`${name}: attempt ${info.attempt} fails`);
        return `${name}:${info.attempt}`;
      });
      const running = ctx.step(name, attempt, { retry: { maxAttempts: branch.maxAttempts, initialMs: 5 } });
      if (!branch.caught) return running;
      return running.catch((error: unknown) => {
        if (error instanceof StepFailedError) return `${name}:gave-up`;
        throw error;
      });
    }
    case 'sleep':
      await ctx.sleep(`t${id}`, branch.ms);
      return `t${id}`;
    case 'signal': {
      const options = branch.timeoutMs === undefined ? {} : { timeoutMs: branch.timeoutMs };
      const payload = await ctx.waitForSignal<string>(`g${id}`, options);
      return payload ?? `g${id}:timeout`;
    }
    case 'child': {
      const input = { id, failures: branch.failures, maxAttempts: branch.maxAttempts };
      try {
        return await ctx.child(scope.child, input);
      } catch (error) {
        if (error instanceof ChildFailedError) return `c${id}:failed`;
        throw error;
      }
    }
    case 'seq': {
      const outputs: unknown[] = [];
      for (const inner of branch.branches) outputs.push(await runBranch(scope, inner));
      return outputs;
    }
    default:
      return runGroup(scope, branch, id);
  }
}

/** `Promise.all` or `Promise.race` over the branches; a failure that reaches the group is caught there. */
async function runGroup(scope: Scope, branch: GroupBranch, id: number): Promise<unknown> {
  const running = branch.branches.map((inner, index) =>
    runBranch(scope, inner).then((value) => ({ won: index, value })),
  );
  try {
    if (branch.kind === 'all') return (await Promise.all(running)).map((settled) => settled.value);
    return await Promise.race(running);
  } catch (error) {
    if (error instanceof StepFailedError) return `${branch.kind}${id}:failed:${error.step}`;
    throw error;
  } finally {
    // The losers' failures are the group's to ignore, not unhandled.
    for (const promise of running) promise.catch(() => undefined);
  }
}

/** Whether `output` is one `branch` can give. */
function conforms(branch: Branch, ids: Map<Branch, number>, output: unknown): boolean {
  const id = ids.get(branch)!;
  switch (branch.kind) {
    case 'step': {
      const succeeded = branch.failures < branch.maxAttempts;
      return output === (succeeded ? `s${id}:${branch.failures + 1}` : `s${id}:gave-up`);
    }
    case 'sleep':
      return output === `t${id}`;
    case 'signal':
      if (!branch.sent) return output === `g${id}:timeout`;
      return output === `g${id}` || (branch.timeoutMs !== undefined && output === `g${id}:timeout`);
    case 'child':
      return (
        output === (branch.failures < branch.maxAttempts ? `c${id}:${branch.failures + 1}` : `c${id}:failed`)
      );
    case 'seq':
      return (
        Array.isArray(output) &&
        output.length === branch.branches.length &&
        branch.branches.every((inner, i) => conforms(inner, ids, output[i]))
      );
    default:
      return groupConforms(branch, ids, id, output);
  }
}

function groupConforms(branch: GroupBranch, ids: Map<Branch, number>, id: number, output: unknown): boolean {
  if (typeof output === 'string') {
    // A failure that reached the group names an uncaught step below it.
    const prefix = `${branch.kind}${id}:failed:s`;
    return output.startsWith(prefix) && uncaughtBelow(branch, ids).has(Number(output.slice(prefix.length)));
  }
  if (branch.kind === 'all')
    return (
      Array.isArray(output) &&
      output.length === branch.branches.length &&
      branch.branches.every((inner, i) => conforms(inner, ids, output[i]))
    );
  const won = (output as { won?: unknown } | null)?.won;
  const inner = typeof won === 'number' ? branch.branches[won] : undefined;
  return inner !== undefined && conforms(inner, ids, (output as { value: unknown }).value);
}

/** Ids of the failing, uncaught steps whose failure can reach `branch` (not stopped by a group below). */
function uncaughtBelow(branch: GroupBranch, ids: Map<Branch, number>): Set<number> {
  const found = new Set<number>();
  const visit = (inner: Branch) => {
    if (inner.kind === 'step' && !inner.caught && inner.failures >= inner.maxAttempts)
      found.add(ids.get(inner)!);
    if (inner.kind === 'seq') inner.branches.forEach(visit);
  };
  branch.branches.forEach(visit);
  return found;
}
