import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runRemoteDemo } from './remote-demo.js';

describe('examples/remote: a dispatcher process and a worker process over HTTP', () => {
  const dir = mkdtempSync(join(tmpdir(), 'skein-remote-test-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('runs every execution in the worker process, returns a completed one again unchanged, and shuts down', async () => {
    const lines: string[] = [];
    const report = await runRemoteDemo(dir, (line) => lines.push(line));
    expect(report.results.map((state) => [state.executionId, state.status])).toEqual([
      ['quote-apple', 'completed'],
      ['quote-pear', 'completed'],
      ['quote-plum', 'completed'],
    ]);
    // Priced in the worker process, not in this one.
    expect(report.results.map((state) => (state.output as { pricedBy: number }).pricedBy)).toEqual([
      report.workerPid,
      report.workerPid,
      report.workerPid,
    ]);
    expect(report.workerPid).not.toBe(process.pid);
    expect(report.results[0]!.output).toMatchObject({ totalCents: 432 });
    expect(report.again.sequence).toBe(report.results[0]!.sequence);
    expect(report.workerExit).toEqual({ code: 0, signal: null });
    expect(lines.at(-1)).toBe('worker exited with code 0');
  }, 60_000);
});
