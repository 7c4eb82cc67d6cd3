/**
 * docs/testing.md#concurrent, adr/0031: random concurrent workflows (Promise.all and
 * Promise.race over steps that fail and retry, sleeps, signal waits with and without timeouts,
 * children that may fail, nested) crashed at every write, on memory and on a SQLite file. Every
 * crash point keeps L1–L3, L5, L6 and once-only steps, on the execution and on each child,
 * recovers to the uncrashed run's outcome, ends within the drive's bound, and the outcome is one
 * the plan can give.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStores } from '@skein/store-sqlite';
import {
  type Branch,
  type CrashTestOptions,
  concurrentWorkflow,
  concurrentWorkflowArb,
  crashAtEveryWrite,
  describePlan,
} from '@skein/testkit';
import { openMemoryStores, StepFailedError, type Stores } from '@skein/workflow-runtime';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function openSqlite(): Stores {
  const dir = mkdtempSync(join(tmpdir(), 'skein-concurrent-'));
  dirs.push(dir);
  return openSqliteStores({ path: join(dir, 'skein.db'), durability: 'normal' });
}

/** Counted over every property run of one store, for the closing line. */
interface Tally {
  workflows: number;
  crashPoints: number;
}

async function crashEveryWrite(plan: Branch, openStores: () => Stores, tally: Tally): Promise<void> {
  const model = concurrentWorkflow(plan);
  const options: CrashTestOptions = {
    openStores,
    workflows: model.workflows,
    signals: model.signals,
    maxCalls: 200,
    // Which of a signal and a child's end arrives first may change after a crash.
    outcomeAccepted: (recovered) =>
      recovered.status === 'failed' || (recovered.status === 'completed' && model.conforms(recovered.output)),
  };
  const report = await crashAtEveryWrite(model.workflow, null, options);
  tally.workflows += 1;
  tally.crashPoints += report.outcomes.length;
  expect(report.outcomes).toHaveLength(2 * report.writes);
  if (report.reference.status === 'completed') expect(model.conforms(report.reference.output)).toBe(true);
  else {
    // Only an uncaught step failure outside every group fails the execution.
    expect(report.reference.status, describePlan(plan)).toBe('failed');
  }
}

const stores: [string, () => Stores, number][] = [
  ['memory', openMemoryStores, 40],
  ['sqlite', openSqlite, 8],
];

describe.each(stores)('random concurrent workflows under crashes (%s)', (name, openStores, numRuns) => {
  it('15.1: crashing at every write of a random concurrent workflow always recovers, within the bound, to the uncrashed outcome', async () => {
    const tally: Tally = { workflows: 0, crashPoints: 0 };
    await fc.assert(
      fc.asyncProperty(concurrentWorkflowArb({ maxDepth: 3, maxBranches: 3 }), (plan) =>
        crashEveryWrite(plan, openStores, tally),
      ),
      { numRuns, seed: Number(process.env.SKEIN_PROPERTY_SEED ?? 20261201) },
    );
    console.log(`${name}: ${tally.workflows} random concurrent workflows, ${tally.crashPoints} crash points`);
    expect(tally.workflows).toBeGreaterThanOrEqual(numRuns);
  }, 600_000);
});

describe('the concurrent workflow model', () => {
  it('prints a plan as a phrase and accepts only outputs the plan can give', () => {
    const plan: Branch = {
      kind: 'race',
      branches: [
        { kind: 'step', failures: 0, maxAttempts: 1, caught: true, turns: 1 },
        { kind: 'sleep', ms: 10 },
      ],
    };
    const model = concurrentWorkflow(plan);
    expect(describePlan(plan)).toBe('race(step 0/1 ~1, sleep 10)');
    expect(model.conforms({ won: 0, value: 's1:1' })).toBe(true);
    expect(model.conforms({ won: 1, value: 't2' })).toBe(true);
    expect(model.conforms({ won: 1, value: 's1:1' })).toBe(false);
    expect(model.conforms(['s1:1', 't2'])).toBe(false);
    expect(StepFailedError).toBeDefined();
  });
});
