/**
 * The kit can fail: the event-store and signal-store suites, run on deliberately broken
 * stores, reject each of them on the cases that name the broken invariant. The suite runs in a child vitest on
 * `broken/broken-stores.fixture.ts` (so a failing case there is an outcome here, not a
 * failure of this run); the memory store runs beside them as the control.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
const config = 'packages/conformance/test/broken/vitest.fixture.config.ts';

interface CaseResult {
  suite: string;
  fullName: string;
  status: string;
  failure: string;
}

let cases: CaseResult[] = [];

/** Run the fixture in a child vitest and collect every case's outcome from its JSON report. */
async function runFixture(): Promise<CaseResult[]> {
  const dir = mkdtempSync(join(tmpdir(), 'skein-broken-'));
  const output = join(dir, 'report.json');
  try {
    // Exit code 1 is expected: the broken stores fail cases. The report is the result.
    await promisify(execFile)(
      'npx',
      ['vitest', 'run', '--config', config, '--reporter=json', `--outputFile=${output}`],
      {
        cwd: repoRoot,
        env: { ...process.env, CI: '' },
      },
    ).catch((error: { code?: number }) => {
      if (error.code !== 1) throw error;
    });
    const report = JSON.parse(readFileSync(output, 'utf8')) as {
      testResults: { assertionResults: { fullName: string; status: string; failureMessages: string[] }[] }[];
    };
    return report.testResults.flatMap((file) =>
      file.assertionResults.map((result) => ({
        suite: result.fullName.split(':')[0]!,
        fullName: result.fullName,
        status: result.status,
        failure: result.failureMessages.join('\n'),
      })),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function failedOf(suite: string): CaseResult[] {
  return cases.filter((result) => result.suite === suite && result.status === 'failed');
}

function failedTitles(suite: string): string[] {
  return failedOf(suite).map((result) => result.fullName);
}

beforeAll(async () => {
  cases = await runFixture();
}, 120_000);

describe('conformance suites reject broken event stores', () => {
  it('control: the memory store passes every event-store case in the same run', () => {
    const control = cases.filter((result) => result.suite === 'control-memory');
    expect(control.length).toBeGreaterThan(20);
    expect(control.filter((result) => result.status !== 'passed')).toEqual([]);
  });

  it('L3: a store that skips the fence check fails the stale-fence cases', () => {
    expect(failedTitles('broken-no-fence-check')).toEqual(
      expect.arrayContaining([
        expect.stringContaining('L3: a stale fence is refused with StaleFenceError'),
        expect.stringContaining('L3: a start fenced out before seq 0 writes nothing'),
        expect.stringContaining(
          'L4: in one batch, good appends commit and bad ones fail with their own error',
        ),
      ]),
    );
    for (const result of failedOf('broken-no-fence-check')) expect(result.fullName).toMatch(/L3|L4/);
  });

  it('L1: a store that accepts a duplicate seq fails the taken-seq cases', () => {
    expect(failedTitles('broken-duplicate-seq')).toEqual(
      expect.arrayContaining([
        expect.stringContaining('L1: a taken seq is refused with DuplicateSequenceError and writes nothing'),
        expect.stringContaining('L1: of 10 concurrent appends at the same seq exactly one wins'),
      ]),
    );
    const taken = failedOf('broken-duplicate-seq').find((result) => result.fullName.includes('a taken seq'));
    expect(taken?.failure).toContain('expected a rejection, the promise resolved');
  });

  it('L4: a group commit that fails every caller for one caller’s error fails the batch-outcome case', () => {
    const failed = failedOf('broken-batch-wide-failure');
    const batch = failed.find((result) => result.fullName.includes('L4: in one batch'));
    expect(batch).toBeDefined();
    // The good appends of the batch were reported with another caller's error.
    expect(batch!.failure).toContain('StaleFenceError');
    expect(failed.map((result) => result.fullName)).toEqual(
      expect.arrayContaining([expect.stringContaining('L2: of 12 racing starts exactly one wins')]),
    );
  });

  it('L3: a store whose takeOverPending fences executions that are not pending fails the takeover case', () => {
    expect(failedTitles('broken-takeover-any-status')).toEqual([
      expect.stringContaining(
        'L3: takeOverPending, where the store has it, fences and reads only the pending',
      ),
    ]);
  });
});

describe('conformance suites reject broken signal stores', () => {
  it('control: the memory signal store passes every signal-store case in the same run', () => {
    const control = cases.filter((result) => result.fullName.startsWith('control-memory: signal store'));
    expect(control.length).toBeGreaterThan(10);
    expect(control.filter((result) => result.status !== 'passed')).toEqual([]);
  });

  it('15.3: a store whose signal ids are unique across executions fails the scoping cases', () => {
    expect(failedTitles('broken-global-signal-ids')).toEqual(
      expect.arrayContaining([expect.stringContaining('signal ids are scoped to their execution')]),
    );
    const scoped = failedOf('broken-global-signal-ids').find((result) => result.fullName.includes('scoped'));
    expect(scoped?.failure).toContain("expected 'duplicate' to be 'sent'");
  });

  it('25.4: a store without the inbox bound fails the bound cases', () => {
    expect(failedTitles('broken-unbounded-inbox')).toEqual(
      expect.arrayContaining([
        expect.stringContaining('the inbox is bounded'),
        expect.stringContaining('the bound holds under concurrent senders'),
      ]),
    );
    for (const result of failedOf('broken-unbounded-inbox'))
      expect(result.fullName).toMatch(/bound|maxPending/);
  });

  it('25.4: a store that checks the bound and inserts in two steps fails the concurrent-senders case', () => {
    expect(failedTitles('broken-racy-inbox-bound')).toEqual([
      expect.stringContaining('the bound holds under concurrent senders'),
    ]);
  });
});

describe('conformance suites reject broken queue stores', () => {
  it('control: the memory queue store passes every queue-store case in the same run', () => {
    const control = cases.filter((result) => result.fullName.startsWith('control-memory: queue store'));
    expect(control.length).toBeGreaterThan(10);
    expect(control.filter((result) => result.status !== 'passed')).toEqual([]);
  });

  it('a store that holds concurrency per owner (per process) fails the across-owners cases', () => {
    expect(failedTitles('broken-per-owner-limit')).toEqual(
      expect.arrayContaining([
        expect.stringContaining('concurrency is a limit across owners'),
        expect.stringContaining(
          'of concurrent claims by many owners, the slots handed out never pass concurrency',
        ),
      ]),
    );
  });

  it('a store that ignores partition keys fails the fairness and partition-limit cases', () => {
    expect(failedTitles('broken-no-partitions')).toEqual(
      expect.arrayContaining([
        expect.stringContaining('fairness: partitions share the slots round-robin'),
        expect.stringContaining('fairness: the rotation goes on from the partition served last'),
        expect.stringContaining('partition concurrency limits each key'),
      ]),
    );
    for (const result of failedOf('broken-no-partitions'))
      expect(result.fullName).toMatch(/partition|fairness|priority/);
  });
});

describe('conformance suites reject broken outboxes', () => {
  it('control: the memory outbox passes every outbox case in the same run', () => {
    const control = cases.filter((result) => result.fullName.startsWith('control-memory: outbox store'));
    expect(control.length).toBeGreaterThan(10);
    expect(control.filter((result) => result.status !== 'passed')).toEqual([]);
  });

  it('O1: an outbox written beside the append, not in its transaction, fails the refused-append cases', () => {
    expect(failedTitles('broken-outbox-before-append')).toEqual(
      expect.arrayContaining([
        expect.stringContaining('O1: a refused append writes none of its messages'),
        expect.stringContaining('O1: an append reusing a message id is refused whole'),
      ]),
    );
    for (const result of failedOf('broken-outbox-before-append')) expect(result.fullName).toMatch(/O1|L7/);
  });

  it('O2: an outbox that lets any token settle fails the token cases', () => {
    expect(failedTitles('broken-outbox-any-token')).toEqual(
      expect.arrayContaining([
        expect.stringContaining('only the current token marks published'),
        expect.stringContaining("a crashed claimer's claim comes back when the window passes"),
      ]),
    );
  });

  it('retention: an outbox that prunes retired deliveries too fails the retention case', () => {
    expect(failedTitles('broken-outbox-prunes-retired')).toEqual([
      expect.stringContaining('retention: prune deletes published deliveries settled before the cutoff'),
    ]);
  });
});

describe('conformance suites reject broken fan-out stores', () => {
  it('control: the memory fan-out store passes every fan-out case in the same run', () => {
    const control = cases.filter((result) => result.fullName.startsWith('control-memory: fan-out store'));
    expect(control.length).toBeGreaterThan(15);
    expect(control.filter((result) => result.status !== 'passed')).toEqual([]);
  });

  it('F4: a store that writes results without the attempt guard fails the stale-worker cases', () => {
    expect(failedTitles('broken-fan-out-no-attempt-guard')).toEqual(
      expect.arrayContaining([
        expect.stringContaining('F4: a stale worker (its lease expired, the chunk re-claimed) is refused'),
        expect.stringContaining('F4: a batch with one stale result is refused whole'),
      ]),
    );
    for (const result of failedOf('broken-fan-out-no-attempt-guard'))
      expect(result.fullName).toMatch(/F4|F6|F8/);
  });

  it('F4/F5: a store that releases before it writes the last results fails the release-with-results cases', () => {
    expect(failedTitles('broken-fan-out-release-before-results')).toEqual([
      expect.stringContaining('F4/F5: a release carries the last results'),
      expect.stringContaining('F4: a release whose last results are stale is refused whole'),
    ]);
  });

  it('F1: a store that dispatches before every chunk is seeded fails the dispatch case', () => {
    expect(failedTitles('broken-fan-out-unseeded-dispatch')).toEqual([
      expect.stringContaining('F1: dispatch is refused until every chunk is seeded'),
    ]);
  });
});
