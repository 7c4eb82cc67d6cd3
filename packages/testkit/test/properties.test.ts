/**
 * Property tests: random workflows (steps that fail a few attempts and are retried, durable
 * sleeps on a virtual clock) crashed at random writes, and at every write, always recover to
 * the output the model predicts with every invariant intact. A deliberately broken workflow
 * shows that a failure shrinks to a small, readable counterexample.
 */
import { CrashInvariantError, crashAt, crashAtEveryWrite, referenceRun } from '@skein/testkit';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildWorkflow, expectedOutput, workflowArb } from './model.js';

const crashArb = fc.record({
  at: fc.nat({ max: 1_000 }),
  when: fc.constantFrom('before' as const, 'after' as const),
});

describe('random workflows under crashes', () => {
  it('a crash at a random write recovers to the model’s output; L1–L3, L5, L6 and once-only steps hold', async () => {
    await fc.assert(
      fc.asyncProperty(fc.record({ workflow: workflowArb, crash: crashArb }), async ({ workflow, crash }) => {
        const reference = await referenceRun(buildWorkflow(workflow), null);
        expect(reference.state.output).toEqual(expectedOutput(workflow));
        const k = crash.at % reference.writes.length;
        const outcome = await crashAt(buildWorkflow(workflow), null, { k, when: crash.when }, { reference });
        expect(outcome.status).toBe('completed');
        expect(outcome.events).toBeGreaterThanOrEqual(outcome.eventsAtCrash);
      }),
      { numRuns: 60 },
    );
  });

  it('crashing at every write of a random workflow always recovers', async () => {
    await fc.assert(
      fc.asyncProperty(fc.record({ workflow: workflowArb }), async ({ workflow }) => {
        const report = await crashAtEveryWrite(buildWorkflow(workflow), null);
        expect(report.reference.output).toEqual(expectedOutput(workflow));
        expect(report.outcomes).toHaveLength(2 * report.writes);
      }),
      { numRuns: 12 },
    );
  }, 120_000);

  it('the kit fails, and shrinks to a readable counterexample: an output that counts body runs', async () => {
    const result = await fc.check(
      fc.asyncProperty(fc.record({ workflow: workflowArb, crash: crashArb }), async ({ workflow, crash }) => {
        const broken = buildWorkflow(workflow, 'count-bodies');
        const reference = await referenceRun(broken, null);
        await crashAt(
          broken,
          null,
          { k: crash.at % reference.writes.length, when: crash.when },
          { reference },
        );
      }),
      { numRuns: 60, seed: 42 },
    );
    expect(result.failed).toBe(true);
    const [shrunk] = result.counterexample!;
    expect(fc.stringify(shrunk)).toBe('{"workflow":[sleep 0ms],"crash":{"at":0,"when":"before"}}');
    expect(result.errorInstance).toBeInstanceOf(CrashInvariantError);
    expect((result.errorInstance as Error).message).toMatch(
      /^crash before write 0 \(events\.append\).*output violated/,
    );
  });
});
