/**
 * Issue #23 items 4 and 9 / adr/0063: L1–L7, once-only steps and the chain's links hold under a
 * crash at every write for a workflow that continues as new twice, waits for a signal in one
 * generation and reads its history size in each. A crash between the successor's seq 0 and
 * `EXECUTION_CONTINUED` is recovered to the same successor id.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStores } from '@skein/store-sqlite';
import { checkChains, crashAtEveryWrite, type Effects } from '@skein/testkit';
import { defineWorkflow, type Envelope, openMemoryStores, type Stores } from '@skein/workflow-runtime';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';

function looper(effects: Effects) {
  return defineWorkflow({
    name: 'looper',
    version: 1,
    input: z.object({ n: z.number().int(), got: z.array(z.string()) }),
    signals: { go: z.string() },
    async run(ctx, { n, got }) {
      const seen = [
        ...got,
        await ctx.step(
          'work',
          effects.track('work', () => `work ${n}`),
        ),
      ];
      if (n === 1) seen.push(await ctx.waitForSignal('go'));
      // A recovery adds events, so the size decides, but is not part of the output.
      const { length } = await ctx.historySize();
      if (n < 3 && length > 0) await ctx.continueAsNew({ n: n + 1, got: seen });
      return seen;
    },
  });
}

const dir = mkdtempSync(join(tmpdir(), 'skein-continue-crash-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

const stores: [string, () => Stores][] = [
  ['memory', () => openMemoryStores()],
  ['sqlite', () => openSqliteStores({ path: join(dir, `crash-${files++}.db`), durability: 'normal' })],
];

describe.each(stores)('crashAtEveryWrite with continue-as-new (%s)', (_name, openStores) => {
  it('every crash point recovers to the uncrashed end of the chain, each step once, every link both ways', async () => {
    const report = await crashAtEveryWrite(
      looper,
      { n: 0, got: [] },
      { executionId: 'loop', openStores, signals: { go: 'went' } },
    );
    expect(report.reference).toMatchObject({
      status: 'completed',
      output: ['work 0', 'work 1', 'went', 'work 2', 'work 3'],
    });
    expect(report.outcomes.length).toBe(2 * report.writes);
    // The writes include both halves of each hand-over, so crashes fell between them.
    expect(report.outcomes.filter((outcome) => outcome.status === 'completed')).toHaveLength(
      report.outcomes.length,
    );
  });
});

describe('checkChains', () => {
  const started = (id: string, from?: string): Envelope =>
    ({
      executionId: id,
      seq: 0,
      envelopeId: `${id}-0`,
      type: 'EXECUTION_STARTED',
      payload: {
        workflow: 'w',
        version: 1,
        input: null,
        ...(from === undefined ? {} : { continuedFrom: { executionId: from, root: from, generation: 1 } }),
      },
      fence: 0,
      recordedAt: new Date(0),
    }) as Envelope;
  const continued = (id: string, successorId: string): Envelope =>
    ({
      executionId: id,
      seq: 1,
      envelopeId: `${id}-1`,
      type: 'EXECUTION_CONTINUED',
      payload: { successorId, position: 0 },
      fence: 0,
      recordedAt: new Date(0),
    }) as Envelope;

  it('passes linked logs and names a successor whose predecessor never ended continued', () => {
    expect(
      checkChains(
        new Map([
          ['a', [started('a'), continued('a', 'a~1')]],
          ['a~1', [started('a~1', 'a')]],
        ]),
      ),
    ).toEqual([]);
    expect(
      checkChains(
        new Map([
          ['a', [started('a')]],
          ['a~1', [started('a~1', 'a')]],
        ]),
      ),
    ).toEqual([
      {
        invariant: 'chain',
        message: '"a~1" continues "a", which did not end continued as it (EXECUTION_STARTED)',
      },
    ]);
    expect(checkChains(new Map([['a', [started('a'), continued('a', 'a~1')]]]))).toEqual([
      { invariant: 'chain', message: '"a" continued as "a~1", whose seq 0 is missing' },
    ]);
  });
});
