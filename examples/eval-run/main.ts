/**
 * `pnpm example:eval-run`: score 10 000 cases across 3 worker processes on one SQLite file,
 * print progress, and print the aggregate. The workflow's own log stays a few events long.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runEvalRun } from './eval-run.js';

const size = Number(process.argv[2] ?? 10_000);
const dir = mkdtempSync(join(tmpdir(), 'skein-eval-run-'));
console.log(`Skein eval run: ${size} cases, 3 worker processes, SQLite file ${join(dir, 'eval.db')}\n`);
const started = Date.now();
let shown = -1;
const report = await runEvalRun(dir, size, 3, (succeeded, total) => {
  if (succeeded === shown) return;
  shown = succeeded;
  console.log(`  scored ${String(succeeded).padStart(String(total).length)} / ${total}`);
});
const { summary } = report;
console.log(
  `\n${summary.status}: ${summary.succeeded} succeeded, ${summary.failed} failed in ${Date.now() - started} ms`,
);
if (summary.aggregate !== undefined)
  console.log(
    `mean score ${(summary.aggregate.sum / summary.aggregate.cases).toFixed(4)} over ${summary.aggregate.cases} cases`,
  );
console.log(`results per worker: ${JSON.stringify(report.byWorker)}`);
console.log(`events in the workflow's own log: ${report.logLength}`);
rmSync(dir, { recursive: true, force: true });
