import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runEvalRun } from './eval-run.js';
import { caseAt } from './workflow.js';

describe('examples/eval-run: 10 000 cases across 3 worker processes', () => {
  const dir = mkdtempSync(join(tmpdir(), 'skein-eval-run-test-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('every case scored exactly once, the aggregate over all of them, a short parent log', async () => {
    const report = await runEvalRun(dir, 10_000, 3);
    const expected = Array.from({ length: 10_000 }, (_, i) => caseAt(i).text.split(' ').length / 7).reduce(
      (a, b) => a + b,
      0,
    );
    expect(report.summary).toMatchObject({ status: 'complete', total: 10_000, succeeded: 10_000, failed: 0 });
    expect(report.summary.aggregate?.cases).toBe(10_000);
    expect(report.summary.aggregate?.sum).toBeCloseTo(expected, 6);
    expect(Object.values(report.byWorker).reduce((a, b) => a + b, 0)).toBe(10_000);
    expect(Object.keys(report.byWorker)).toHaveLength(3);
    expect(report.logLength).toBeLessThan(80);
  }, 120_000);
});
