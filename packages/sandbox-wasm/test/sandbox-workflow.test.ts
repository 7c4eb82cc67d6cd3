import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import {
  SandboxErrorClasses,
  SandboxErrorCodes,
  SandboxFuelExhaustedError,
  SandboxPool,
} from '@skein/sandbox-wasm';
import { openSqliteStores } from '@skein/store-sqlite';
import {
  createRuntime,
  defineWorkflow,
  type Envelope,
  StepFailedError,
  type StepFailedPayload,
} from '@skein/workflow-runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { exited, spawnScript } from '../../worker-runtime-local/test/support/spawn.js';
import { testEvaluator } from './support/pool.js';
import { CRASH_FUEL, scoreWorkflow } from './support/score-workflow.js';

const dir = mkdtempSync(join(tmpdir(), 'skein-sandbox-workflow-'));
const pool = new SandboxPool({ size: 1 });

beforeAll(async () => pool.warm(await testEvaluator()), 120_000);
afterAll(async () => {
  await pool.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Run `fn` with a runtime on the SQLite file `db`, closed afterwards. */
async function withRuntime<T>(
  db: string,
  fn: (runtime: ReturnType<typeof createRuntime>) => Promise<T>,
): Promise<T> {
  const stores = openSqliteStores({ path: join(dir, db) });
  const runtime = createRuntime({ stores, workflows: [scoreWorkflow(pool, await testEvaluator())] });
  try {
    return await fn(runtime);
  } finally {
    await runtime.close();
    await stores.close();
  }
}

function stepFailures(log: Envelope[]): StepFailedPayload[] {
  return log.filter((e) => e.type === 'STEP_FAILED').map((e) => e.payload as StepFailedPayload);
}

/** The fields of a recorded sandbox error that a replay must meet again. */
function outcome(failure: StepFailedPayload): Record<string, unknown> {
  const { code, name, message, fuel, component } = failure.error as Record<string, unknown>;
  return { code, name, message, fuel, component };
}

describe('W1 a sandboxed step in a workflow', () => {
  it("records the evaluator's output as the step's output", async () => {
    await withRuntime('ok.db', async (runtime) => {
      const workflow = scoreWorkflow(pool, await testEvaluator());
      const handle = await runtime.start(
        workflow,
        { case: { text: 'two words' }, fuel: 10_000_000 },
        { executionId: 'ok-1' },
      );
      expect(JSON.parse(await handle.result())).toMatchObject({ score: 9, words: 2 });
      const log = await runtime.history('ok-1');
      expect(log.map((e) => e.type)).toEqual([
        'EXECUTION_STARTED',
        'STEP_STARTED',
        'STEP_COMPLETED',
        'EXECUTION_COMPLETED',
      ]);
    });
  });

  it('a limit breach is a recorded step failure with its code, not retried despite maxAttempts 3', async () => {
    await withRuntime('breach.db', async (runtime) => {
      const workflow = scoreWorkflow(pool, await testEvaluator());
      const handle = await runtime.start(
        workflow,
        { case: { loop: true }, fuel: 2_000_000 },
        { executionId: 'breach-1' },
      );
      await expect(handle.result()).rejects.toMatchObject({ code: 'EXECUTION_FAILED' });
      expect((await runtime.loadState('breach-1'))?.status).toBe('failed');
      const log = await runtime.history('breach-1');
      const failures = stepFailures(log);
      expect(failures).toHaveLength(1);
      expect(failures[0]).toMatchObject({ name: 'score', attempt: 1 });
      expect(failures[0]!.retryAt).toBeUndefined();
      expect(outcome(failures[0]!)).toMatchObject({ code: SandboxErrorCodes.FuelExhausted, fuel: 2_000_000 });
      expect(log.at(-1)!.type).toBe('EXECUTION_FAILED');
    });
  });
});

describe('W1 registered sandbox errors', () => {
  it('come back as their own class in the body, on the first run and on a replay', async () => {
    const evaluator = await testEvaluator();
    const caught = defineWorkflow({
      name: 'score-caught',
      input: z.object({ fuel: z.number() }),
      async run(ctx, { fuel }) {
        try {
          return await ctx.step('score', () =>
            pool.invoke(evaluator, JSON.stringify({ loop: true }), { fuel }),
          );
        } catch (error) {
          const cause = error instanceof StepFailedError ? error.cause : undefined;
          return {
            fuelError: cause instanceof SandboxFuelExhaustedError,
            fuel: (cause as { fuel?: number })?.fuel,
          };
        }
      },
    });
    const stores = openSqliteStores({ path: join(dir, 'caught.db') });
    try {
      const runtime = createRuntime({ stores, workflows: [caught], errors: SandboxErrorClasses });
      const handle = await runtime.start(caught, { fuel: 1_000_000 }, { executionId: 'caught-1' });
      expect(await handle.result()).toEqual({ fuelError: true, fuel: 1_000_000 });
      await runtime.close();
      const replaying = createRuntime({ stores, workflows: [caught], errors: SandboxErrorClasses });
      expect((await replaying.loadState('caught-1'))?.output).toEqual({ fuelError: true, fuel: 1_000_000 });
      const failure = stepFailures(await replaying.history('caught-1'))[0]!;
      expect(failure.error).toBeInstanceOf(SandboxFuelExhaustedError);
      await replaying.close();
    } finally {
      await stores.close();
    }
  });
});

describe('W2 a fuel-exhausted step replays to the same outcome after a crash', () => {
  it('the owner is SIGKILLed mid-step; a fresh runtime on the SQLite file re-runs the step and meets the same failure', async () => {
    const db = join(dir, 'crash.db');
    const child = spawnScript(new URL('./support/score-child.ts', import.meta.url), [db, 'crash-1']);
    const childExit = exited(child);
    for await (const line of createInterface({ input: child.stdout! })) {
      if (line === 'in-step score') {
        child.kill('SIGKILL');
        break;
      }
    }
    expect((await childExit).signal).toBe('SIGKILL');

    await withRuntime('crash.db', async (runtime) => {
      expect((await runtime.history('crash-1')).map((e) => e.type)).toEqual([
        'EXECUTION_STARTED',
        'STEP_STARTED',
      ]);
      const input = { case: { loop: true }, fuel: CRASH_FUEL };
      const recovered = await runtime.execute({ executionId: 'crash-1', workflow: 'score-case', input });
      expect(recovered.status).toBe('failed');

      const reference = await runtime.start(scoreWorkflow(pool, await testEvaluator()), input, {
        executionId: 'uninterrupted-1',
      });
      await reference.result().catch(() => undefined);

      const afterCrash = stepFailures(await runtime.history('crash-1'));
      const uninterrupted = stepFailures(await runtime.history('uninterrupted-1'));
      expect(afterCrash).toHaveLength(1);
      expect(outcome(afterCrash[0]!)).toMatchObject({
        code: SandboxErrorCodes.FuelExhausted,
        fuel: CRASH_FUEL,
      });
      expect(outcome(afterCrash[0]!)).toEqual(outcome(uninterrupted[0]!));
    });
  }, 180_000);
});
