/**
 * `pnpm demo`: a workflow runs in a child process that is killed with SIGKILL in the middle
 * of a step; a fresh process resumes it from the SQLite log. Completed steps do not run again.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatLog, runCrashDemo } from './crash-demo.js';

const dir = mkdtempSync(join(tmpdir(), 'skein-demo-'));
console.log(`Skein crash-recovery demo (SQLite file: ${join(dir, 'skein.db')})\n`);
console.log('1. A worker process starts "ship-order": charge-card, print-label, notify-customer.');
console.log('   While print-label is in flight, the demo kills the worker with SIGKILL.\n');

const report = await runCrashDemo(dir);

console.log(`   worker ended by ${report.killedBy ?? 'exit'}; the log it left behind:`);
console.log(formatLog(report.logAtCrash));
console.log('\n2. A fresh process opens the same file and calls runtime.execute(): it takes a new');
console.log('   fence, appends EXECUTION_RECOVERED and replays; recorded steps return their outputs.\n');
console.log(`   ${report.recoveredLine}`);
console.log('\n   The whole log:');
console.log(formatLog(report.log));
console.log("\n3. How often each step's side effect really ran:");
for (const [step, times] of Object.entries(report.effects)) {
  const why =
    step === 'print-label'
      ? 'it was in flight when the process died, so it ran again (the one step that may)'
      : 'its result was in the log, so it never ran again';
  console.log(`   ${step.padEnd(16)} ${times}x  ${why}`);
}
const ok =
  report.killedBy === 'SIGKILL' &&
  report.effects['charge-card'] === 1 &&
  (report.effects['print-label'] ?? 0) <= 2 &&
  report.effects['notify-customer'] === 1 &&
  report.log.at(-1)?.type === 'EXECUTION_COMPLETED';
console.log(ok ? '\nRecovered: completed steps did not run again.' : '\nUNEXPECTED: see the log above.');
process.exitCode = ok ? 0 : 1;
