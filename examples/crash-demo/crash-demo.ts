/**
 * The crash-recovery demo as a function: run the workflow in a child process, SIGKILL it in
 * the middle of a step, resume in a fresh process, and report the log and the effects.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { openSqliteStores } from '@skein/store-sqlite';
import { type Envelope, readHistory } from '@skein/workflow-runtime';
import { exited, spawnScript } from '../../packages/worker-runtime-local/test/support/spawn.js';

/** What the demo observed. */
export interface CrashDemoReport {
  killedBy: NodeJS.Signals | null;
  /** The log right after the kill. */
  logAtCrash: Envelope[];
  /** The log after recovery. */
  log: Envelope[];
  /** How often each step's effect ran. */
  effects: Record<string, number>;
  recoveredLine: string;
}

/** Run the demo in `dir` (a fresh directory). */
export async function runCrashDemo(dir: string, executionId = 'order-42'): Promise<CrashDemoReport> {
  const dbPath = join(dir, 'skein.db');
  const effectsFile = join(dir, 'effects.log');

  const worker = spawnScript(new URL('./worker.ts', import.meta.url), [dbPath, effectsFile, executionId]);
  const done = exited(worker);
  for await (const line of createInterface({ input: worker.stdout! })) {
    if (line === 'in-step print-label') {
      worker.kill('SIGKILL');
      break;
    }
  }
  const { signal } = await done;
  const logAtCrash = await readLog(dbPath, executionId);

  const recover = spawnScript(new URL('./recover.ts', import.meta.url), [dbPath, effectsFile, executionId]);
  let recoveredLine = '';
  for await (const line of createInterface({ input: recover.stdout! })) {
    if (line.startsWith('recovered ')) recoveredLine = line;
  }
  const { code } = await exited(recover);
  if (code !== 0) throw new Error(`the recovering process exited with code ${code}`);

  return {
    killedBy: signal,
    logAtCrash,
    log: await readLog(dbPath, executionId),
    effects: countEffects(effectsFile),
    recoveredLine,
  };
}

async function readLog(dbPath: string, executionId: string): Promise<Envelope[]> {
  const stores = openSqliteStores({ path: dbPath });
  try {
    // A read needs no runtime (one would also start its in-process maintenance, adr/0042).
    return await readHistory(stores.events, executionId);
  } finally {
    await stores.close();
  }
}

function countEffects(file: string): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const step = line.split(' ')[0];
    if (step) counts[step] = (counts[step] ?? 0) + 1;
  }
  return counts;
}

/** One line per envelope: seq, type, fence and the interesting part of the payload. */
export function formatLog(log: readonly Envelope[]): string {
  return log
    .map((event) => {
      const p = event.payload;
      const attempt = 'attempt' in p && p.attempt !== undefined ? ` (attempt ${p.attempt})` : '';
      const detail = 'name' in p ? `${p.name}${attempt}` : '';
      return `  ${String(event.seq).padStart(3)}  ${event.type.padEnd(22)} fence ${event.fence}  ${detail}`;
    })
    .join('\n');
}
