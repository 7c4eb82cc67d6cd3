/**
 * Issue 25.4: a wait's memory is flat in the size of the inbox. A child process whose heap is
 * capped at 64 MB resumes an execution whose inbox holds signals of a name it never waits for
 * (200 MB of them on a database), through a wait for one name and a wait for any of 2,000
 * names at once, on every real store. Loading the inbox (or a copy of it per wait) runs it out
 * of heap; a resume must leave no more on the heap than the same resume with an empty inbox.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import {
  dropSchema,
  freshSchema,
  PG_URL,
  pgReachable,
  whenPostgres,
} from '../../store-postgres/test/support/pg.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const fixture = fileURLToPath(new URL('./fixtures/inbox-heap.ts', import.meta.url));
/** The child's old-space cap: a third of the 200 MB the noisy inbox holds. */
const HEAP_CAP_MB = 64;

interface Report {
  heap: { quiet: number[]; noisy: number[] };
  output: unknown;
  maxRssKb: number;
}

/** Run the fixture on `args` under the heap cap; its report, or a failure with its stderr. */
async function runChild(args: string[]): Promise<Report> {
  try {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--expose-gc', `--max-old-space-size=${HEAP_CAP_MB}`, '--import', 'tsx', fixture, ...args],
      {
        cwd: root,
        env: { ...process.env, TSX_TSCONFIG_PATH: `${root}tsconfig.json` },
        maxBuffer: 16 << 20,
        timeout: 240_000,
      },
    );
    return JSON.parse(stdout.trim().split('\n').at(-1)!) as Report;
  } catch (error) {
    const { stderr, signal, code } = error as { stderr?: string; signal?: string; code?: number };
    const tail = (stderr ?? '').split('\n').slice(-15).join('\n');
    throw new Error(`the child failed (code ${code}, signal ${signal}):\n${tail}`);
  }
}

const backings: [string, () => { args: string[]; cleanup(): Promise<void> }][] = [
  ['memory', () => ({ args: ['memory'], cleanup: async () => undefined })],
  [
    'sqlite',
    () => {
      const dir = mkdtempSync(join(tmpdir(), 'skein-inbox-heap-'));
      return {
        args: ['sqlite', join(dir, 'skein.db')],
        cleanup: async () => rmSync(dir, { recursive: true, force: true }),
      };
    },
  ],
  ...(pgReachable
    ? [
        [
          'postgres',
          () => {
            const schema = freshSchema();
            return { args: ['postgres', PG_URL, schema], cleanup: () => dropSchema(schema) };
          },
        ] as [string, () => { args: string[]; cleanup(): Promise<void> }],
      ]
    : []),
];
whenPostgres(() => {});

describe.each(backings)('a wait’s memory is flat in the inbox size (%s store)', (_, arrange) => {
  it(`25.4: with a large inbox of unrelated signals, resumes run in a ${HEAP_CAP_MB} MB heap and leave no more than with an empty one`, async () => {
    const { args, cleanup } = arrange();
    try {
      const report = await runChild(args);
      expect(report.output).toEqual(['go', 'go']);
      const { quiet, noisy } = report.heap;
      for (const [i, after] of noisy.entries()) {
        // A resume leaves no more on the heap (after a full GC) for the inbox it passed over. (In
        // memory the inbox is on the heap while the quiet execution runs, and gone with the noisy
        // one's end, so the noisy side may be lower.) The bound is 8 MiB against an inbox of
        // 200 MiB: a few of its 1 MB payloads held by a driver's buffers between runs (up to 3.8 MB
        // seen) pass, loading the inbox or a page of it does not.
        expect(after - quiet[i]!, `resume ${i}: ${after} vs ${quiet[i]} bytes`).toBeLessThan(8 << 20);
      }
    } finally {
      await cleanup();
    }
  }, 300_000);
});
