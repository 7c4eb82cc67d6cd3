/**
 * The end-to-end cases every store runs: the real `skein` executable as a child process over
 * a store that a real runtime wrote (see fixture.ts), and the log read back afterwards.
 */

import { createInspector } from '@skein/cli';
import { Supervisor } from '@skein/worker-runtime-local';
import { createRuntime, type Envelope, type Stores } from '@skein/workflow-runtime';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { workflows } from '../fixtures/workflows.mjs';
import { ensureBuilt, skein } from './binary.js';
import { FIXTURE, populate, waitUntil } from './fixture.js';

/** A store for one test: the CLI flags that name it, and the test's own stores on it. */
export interface CliStore {
  args: string[];
  stores: Stores;
  close(): Promise<void>;
}

/** What every store's suite needs. */
export interface CliSuiteOptions {
  name: string;
  open(): Promise<CliStore>;
}

/** Every execution's (status, seq, fence): what a read must leave as it was. */
export async function snapshotIndex(stores: Stores): Promise<string> {
  const page = await stores.events.listExecutions({ limit: 1000 });
  const rows = await Promise.all(
    page.items.map(
      async (s) =>
        `${s.executionId}:${s.status}:${s.sequence}:${await stores.events.currentFence(s.executionId)}`,
    ),
  );
  return rows.join('\n');
}

/** Run a supervisor with the fixture's workflows (short leases) until `done` resolves. */
export async function superviseUntil(
  stores: Stores,
  done: () => Promise<boolean>,
  what: string,
): Promise<void> {
  const runtime = createRuntime({ stores, workflows, lease: { ttlMs: 400 }, onError: () => undefined });
  const supervisor = new Supervisor({
    runtime,
    stores,
    leaseTtlMs: 400,
    tickIntervalMs: 50,
    onError: () => undefined,
  });
  supervisor.start();
  try {
    await waitUntil(done, what);
  } finally {
    await supervisor.stop();
    await runtime.close();
  }
}

const types = (log: Envelope[]) => log.map((e) => e.type);

/** Register the suite; see the module comment. */
export function cliSuite(options: CliSuiteOptions): void {
  describe(`skein on ${options.name}`, () => {
    let store: CliStore;
    const run = (...args: string[]) => skein([...store.args, ...args]);
    const history = (id: string) => createRuntime({ stores: store.stores, workflows: [] }).history(id);
    const status = async (id: string) => (await store.stores.events.getExecution(id))?.status;

    beforeAll(ensureBuilt, 600_000);
    beforeEach(async () => {
      store = await options.open();
      await populate(store.stores);
    });
    afterEach(async () => {
      await store.close();
    });

    it('list: a table for people, JSON for scripts, filtered by status and workflow, paged by cursor', async () => {
      const table = await run('list');
      expect(table.code).toBe(0);
      for (const [id, s] of Object.entries(FIXTURE))
        expect(table.stdout).toMatch(new RegExp(`${id}\\s*│\\s*\\w+\\s*│\\s*1\\s*│\\s*${s}`));
      const all = JSON.parse((await run('list', '--json')).stdout) as {
        items: { executionId: string; status: string }[];
      };
      expect(Object.fromEntries(all.items.map((i) => [i.executionId, i.status]))).toEqual(FIXTURE);
      const suspended = JSON.parse(
        (await run('list', '--status', 'suspended,failed', '--json')).stdout,
      ) as typeof all;
      expect(suspended.items.map((i) => i.executionId).sort()).toEqual([
        'broken-1',
        'nap-1',
        'order-waiting',
      ]);
      const orders = JSON.parse((await run('list', '--workflow', 'order', '--json')).stdout) as typeof all;
      expect(orders.items.map((i) => i.executionId).sort()).toEqual([
        'dead-1',
        'order-ok',
        'order-pending',
        'order-waiting',
      ]);
      const first = JSON.parse((await run('list', '--limit', '4', '--json')).stdout) as typeof all & {
        nextCursor: string;
      };
      expect(first.items).toHaveLength(4);
      const second = JSON.parse(
        (await run('list', '--limit', '4', '--cursor', first.nextCursor, '--json')).stdout,
      ) as typeof all;
      expect(second.items[0]?.executionId).not.toBe(first.items[3]?.executionId);
      expect([...first.items, ...second.items].map((i) => i.executionId)).toEqual(
        all.items.slice(0, 8).map((i) => i.executionId),
      );
      expect((await run('list', '--limit', '4')).stdout).toContain(`more: pass --cursor ${first.nextCursor}`);
    });

    it('list --blocked and show: a standing blockage with why; one the log has moved past is not shown', async () => {
      const blockages = store.stores.blockages!;
      const waiting = (await store.stores.events.getExecution('order-waiting'))!;
      const message = 'replay of "order-waiting" diverged at position 1: the log holds step "reserve"';
      await blockages.record({
        executionId: 'order-waiting',
        seq: waiting.sequence,
        code: 'NON_DETERMINISM',
        message,
        at: 1_700_000_000_000,
      });
      await blockages.record({
        executionId: 'nap-1',
        seq: 0,
        code: 'NON_DETERMINISM',
        message,
        at: 1_700_000_000_000,
      });
      const listed = JSON.parse((await run('list', '--blocked', '--json')).stdout) as {
        items: { executionId: string; status: string; blocked: { code: string; attempts: number } }[];
      };
      expect(listed.items.map((i) => [i.executionId, i.status, i.blocked.code, i.blocked.attempts])).toEqual([
        ['order-waiting', 'suspended', 'NON_DETERMINISM', 1],
      ]);
      const table = await run('list', '--blocked');
      expect(table.stdout).toMatch(/order-waiting.*2023-11-14T22:13:20.000Z\s*│\s*1\s*│\s*NON_DETERMINISM: /);
      expect(table.stdout).not.toContain('nap-1');
      const shown = await run('show', 'order-waiting');
      expect(shown.stdout).toMatch(/blocked:\s+NON_DETERMINISM since 2023-11-14T22:13:20.000Z \(1 attempts/);
      expect((await run('show', 'nap-1')).stdout).not.toContain('blocked:');
      const inspector = createInspector({ stores: store.stores, label: 'test' });
      const page = await (await inspector.request('/executions/order-waiting')).text();
      expect(page).toMatch(/id="blocked">NON_DETERMINISM since 2023-11-14T22:13:20.000Z \(1 attempts/);
      expect(await (await inspector.request('/executions/nap-1')).text()).not.toContain('id="blocked"');
    });

    it('show: the state, every call with its attempts and the errors of its retries, the writers', async () => {
      const shown = await run('show', 'retried-1');
      expect(shown.code).toBe(0);
      expect(shown.stdout).toMatch(/status:\s+completed/);
      expect(shown.stdout).toMatch(/flaky-call\s*│\s*completed\s*│\s*3/);
      expect(shown.stdout).toContain('attempt 1: Error: upstream 503 on attempt 1');
      expect(shown.stdout).toContain('attempt 2: Error: upstream 503 on attempt 2');
      const waiting = await run('show', 'order-waiting');
      expect(waiting.stdout).toMatch(/waiting for:\s+signal approve/);
      const parent = JSON.parse((await run('show', 'parent-1', '--json')).stdout) as {
        children: string[];
        state: { status: string };
      };
      expect(parent).toMatchObject({ children: ['leaf-of-parent-1'], state: { status: 'completed' } });
      const missing = await run('show', 'no-such-id');
      expect(missing.code).toBe(1);
      expect(missing.stderr).toContain('"no-such-id"');
      expect(missing.stdout).toBe('');
    });

    it('history: the log in seq order; --json gives the envelopes; --follow ends when the execution ends', async () => {
      const log = await history('order-ok');
      const text = await run('history', 'order-ok');
      expect(text.code).toBe(0);
      const lines = text.stdout.trim().split('\n');
      expect(lines.map((l) => l.trim().split(/\s+/)[2])).toEqual(types(log));
      const envelopes = (await run('history', 'order-ok', '--json')).stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { seq: number; type: string; fence: number });
      expect(envelopes.map((e) => [e.seq, e.type, e.fence])).toEqual(
        log.map((e) => [e.seq, e.type, e.fence]),
      );
      const from = (await run('history', 'order-ok', '--from', '3', '--json')).stdout.trim().split('\n');
      expect(JSON.parse(from[0]!)).toMatchObject({ seq: 3 });
      const followed = await run('history', 'order-ok', '--follow');
      expect(followed.code).toBe(0);
      expect(followed.stdout.trim().split('\n').at(-1)).toContain('EXECUTION_COMPLETED');
    });

    it('dead-letters: every dead-lettered execution with its reason', async () => {
      const listed = await run('dead-letters');
      expect(listed.code).toBe(0);
      expect(listed.stdout).toContain('dead-1');
      expect(listed.stdout).toContain('poison: the supervisor tick failed for 5 min');
      const json = JSON.parse((await run('dead-letters', '--json')).stdout) as { items: unknown[] };
      expect(json.items).toEqual([
        expect.objectContaining({
          executionId: 'dead-1',
          workflow: 'order',
          reason: 'poison: the supervisor tick failed for 5 min',
        }),
      ]);
    });

    it('reads write nothing: list, show, history, dead-letters and recover --dry-run leave every seq and fence as they were', async () => {
      const before = await snapshotIndex(store.stores);
      for (const args of [
        ['list'],
        ['show', 'order-waiting'],
        ['history', 'nap-1'],
        ['dead-letters'],
        ['recover', '--dry-run', '--lease-ttl', '1'],
      ]) {
        const result = await run(...args);
        expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(0);
      }
      expect(await snapshotIndex(store.stores)).toBe(before);
    });

    it('cancel records CANCEL_REQUESTED without running a body; a supervisor that runs the workflow ends it cancelled', async () => {
      const suspended = await run('cancel', 'order-waiting', '--reason', 'customer asked');
      expect(suspended.code).toBe(0);
      const pending = await run('cancel', 'order-pending', '--json');
      expect(JSON.parse(pending.stdout)).toMatchObject({
        executionId: 'order-pending',
        cancelled: true,
        status: 'pending',
      });
      // Recorded, and nothing ran: no step started after the request.
      const requested = await history('order-waiting');
      expect(types(requested).slice(-2)).toEqual(['CANCEL_REQUESTED', 'EXECUTION_RESUMED']);
      expect(requested.at(-2)?.payload).toMatchObject({ reason: 'customer asked' });
      expect(types(await history('order-pending'))).toEqual(['EXECUTION_STARTED', 'CANCEL_REQUESTED']);
      const again = await run('cancel', 'order-waiting');
      expect(again.stdout).toContain('already requested');
      await superviseUntil(
        store.stores,
        async () =>
          (await status('order-waiting')) === 'cancelled' && (await status('order-pending')) === 'cancelled',
        'both executions to end cancelled',
      );
      const ended = await history('order-waiting');
      expect(ended.at(-1)).toMatchObject({
        type: 'EXECUTION_CANCELLED',
        payload: { reason: 'customer asked' },
      });
      expect(types(await history('order-pending'))).not.toContain('STEP_STARTED');
    });

    it('cancel of an ended execution writes nothing and exits 1', async () => {
      const before = await snapshotIndex(store.stores);
      const result = await run('cancel', 'order-ok');
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('already completed');
      expect(await snapshotIndex(store.stores)).toBe(before);
    });

    it('signal goes to the inbox; a supervisor resumes the waiting execution, which consumes it', async () => {
      const sent = await run('signal', 'order-waiting', 'approve', 'true', '--id', 'sig-1', '--json');
      expect(sent.code).toBe(0);
      expect(JSON.parse(sent.stdout)).toMatchObject({ signalId: 'sig-1', accepted: true, handedOver: true });
      expect((await store.stores.signals.pending('order-waiting')).map((s) => s.signalId)).toEqual(['sig-1']);
      await superviseUntil(
        store.stores,
        async () => (await status('order-waiting')) === 'completed',
        'the signalled execution to complete',
      );
      const log = await history('order-waiting');
      expect(log.find((e) => e.type === 'SIGNAL_RECEIVED')?.payload).toMatchObject({
        signalId: 'sig-1',
        payload: true,
      });
      expect(log.at(-1)?.payload).toEqual({ output: 'charged hold-b' });
      const late = await run('signal', 'order-waiting', 'approve', 'true');
      expect(late.code).toBe(1);
      expect(late.stderr).toContain('completed');
    });

    it('a payload that is not JSON is a usage error (exit 2) and writes nothing', async () => {
      const before = await snapshotIndex(store.stores);
      const result = await run('signal', 'order-waiting', 'approve', '{oops');
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('is not JSON');
      expect(await store.stores.signals.pending('order-waiting')).toEqual([]);
      expect(await snapshotIndex(store.stores)).toBe(before);
    });
  });
}
