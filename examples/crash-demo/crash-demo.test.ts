import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCrashDemo } from './crash-demo.js';

describe('crash recovery with a real process killed by SIGKILL mid-step', () => {
  const dir = mkdtempSync(join(tmpdir(), 'skein-crash-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('resumes in a fresh process: completed steps run once, the interrupted one at most twice', async () => {
    const report = await runCrashDemo(dir, 'crash-1');

    expect(report.killedBy).toBe('SIGKILL');
    // The kill left the execution mid-step: print-label started, never completed.
    expect(report.logAtCrash.map((e) => e.type)).toEqual([
      'EXECUTION_STARTED',
      'STEP_STARTED',
      'STEP_COMPLETED',
      'STEP_STARTED',
    ]);

    const types = report.log.map((e) => e.type);
    expect(types.filter((t) => t === 'EXECUTION_STARTED')).toHaveLength(1);
    expect(types.filter((t) => t === 'EXECUTION_RECOVERED')).toHaveLength(1);
    expect(types.at(-1)).toBe('EXECUTION_COMPLETED');
    expect(report.log.map((e) => e.seq)).toEqual(report.log.map((_, i) => i));
    // The recovering writer took a newer fence than the killed one.
    const recovered = report.log.find((e) => e.type === 'EXECUTION_RECOVERED')!;
    expect(recovered.fence).toBeGreaterThan(report.log[0]!.fence);

    expect(report.effects['charge-card']).toBe(1);
    expect(report.effects['print-label']).toBeGreaterThanOrEqual(1);
    expect(report.effects['print-label']).toBeLessThanOrEqual(2);
    expect(report.effects['notify-customer']).toBe(1);
    expect(report.recoveredLine).toContain('completed');
  }, 60_000);
});
