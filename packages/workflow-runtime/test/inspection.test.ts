/**
 * Issue #5, inspection and versions: `runtime.list` validates its query and pages the
 * execution index; an execution pinned to a version this node does not run is left pending,
 * refused with `UnknownWorkflowError` (nothing written) and shown by `list({ versions: true })`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStores } from '@skein/store-sqlite';
import {
  createRuntime,
  defineWorkflow,
  type EventStore,
  InvalidInputError,
  UnknownWorkflowError,
} from '@skein/workflow-runtime';
import { encode, newId } from '@skein/workflow-runtime/internal';
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { backings, harness } from './support/stores.js';

const v1 = defineWorkflow({
  name: 'report',
  version: 1,
  input: z.null(),
  signals: { poke: z.null() },
  run: async (ctx) => ctx.waitForSignal('poke'),
});
const v2 = defineWorkflow({ name: 'report', version: 2, input: z.null(), run: async () => 'v2' });

describe.each(backings)('inspection and versions (%s store)', (_, open) => {
  const h = harness(open);

  test('runtime.list validates its query before reading: limit >= 1, known statuses', async () => {
    const { stores } = h.open();
    const runtime = h.runtime({ stores, workflows: [v2] });
    for (const query of [
      { limit: 0 },
      { limit: 1001 },
      { status: 'sleeping' },
      { workflow: '' },
      { cursor: 7 },
    ]) {
      const refused = runtime.list(query as never);
      await expect(refused, JSON.stringify(query)).rejects.toBeInstanceOf(InvalidInputError);
      await expect(refused).rejects.toThrow(/list query is invalid: query\.(limit|status|workflow|cursor)/);
    }
    await expect(stores.events.listExecutions({ limit: 0 })).rejects.toThrow(/query\.limit/);
  });

  test('an execution pinned to an unregistered version is left pending, refused without a write, and listed as such', async () => {
    const { stores } = h.open();
    await h.runtime({ stores, workflows: [v1] }).enqueue(v1, null, { executionId: 'old' });
    const onlyV2 = h.runtime({ stores, workflows: [v2] });
    await (await onlyV2.start(v2, null, { executionId: 'new' })).result();
    const before = await stores.events.read('old');

    const refused = onlyV2.execute({ executionId: 'old', workflow: 'report' });
    await expect(refused).rejects.toBeInstanceOf(UnknownWorkflowError);
    await expect(refused).rejects.toThrow(/"report" version 1 is not registered \(registered: report@2\)/);
    const cancel = onlyV2.cancel('old', 'x');
    await expect(cancel).rejects.toThrow(/execution "old": workflow "report" version 1 is not registered/);
    await expect(onlyV2.signal('old', 'poke', null)).rejects.toBeInstanceOf(UnknownWorkflowError);
    expect(await stores.events.read('old')).toEqual(before);
    expect(await stores.signals.pending('old')).toEqual([]);

    const page = await onlyV2.list({ status: 'pending', versions: true });
    expect(page.items).toEqual([
      expect.objectContaining({ executionId: 'old', status: 'pending', version: 1, registered: false }),
    ]);
    const all = await onlyV2.list({ workflow: 'report', versions: true });
    expect(all.items.map((item) => [item.executionId, item.version, item.registered])).toEqual([
      ['new', 2, true],
      ['old', 1, false],
    ]);
  });
});

/** Write seq 0 of `count` executions straight into the store (no runtime), in batches. */
async function populate(events: EventStore, count: number): Promise<void> {
  const statuses = ['EXECUTION_STARTED', 'EXECUTION_SUSPENDED', 'EXECUTION_COMPLETED'] as const;
  for (let start = 0; start < count; start += 2000) {
    const batch = Array.from({ length: Math.min(2000, count - start) }, (_, k) => start + k);
    await Promise.all(
      batch.map((i) => {
        const executionId = `x-${String(i).padStart(6, '0')}`;
        const kind = statuses[i % 3]!;
        const drafts = [
          {
            envelopeId: newId(),
            type: 'EXECUTION_STARTED' as const,
            payload: encode({ workflow: i % 2 ? 'odd' : 'even', version: 1, input: null }),
            recordedAt: 1,
          },
        ];
        if (kind !== 'EXECUTION_STARTED')
          drafts.push({ envelopeId: newId(), type: kind as never, payload: encode({}), recordedAt: 2 });
        return events.append({
          executionId,
          workflow: i % 2 ? 'odd' : 'even',
          expectedSeq: 0,
          fence: 0,
          events: drafts,
        });
      }),
    );
  }
}

describe('runtime.list over 100,000 executions (sqlite)', () => {
  test('pages of 100 by status and workflow are exact, in id order, and their cursors chain', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'skein-list-'));
    const stores = openSqliteStores({ path: join(dir, 'skein.db'), durability: 'normal' });
    try {
      await populate(stores.events, 100_000);
      const runtime = createRuntime({ stores, workflows: [v2] });
      let cursor: string | undefined;
      const seen: string[] = [];
      for (let page = 0; page < 3; page++) {
        const result = await runtime.list({ status: ['suspended'], workflow: 'odd', limit: 100, cursor });
        expect(result.items).toHaveLength(100);
        expect(result.items.every((item) => item.status === 'suspended' && item.workflow === 'odd')).toBe(
          true,
        );
        seen.push(...result.items.map((item) => item.executionId));
        cursor = result.nextCursor;
      }
      // i % 3 === 1 (suspended) and odd: i = 1, 7, 13, ... (every 6th from 1).
      const expected = Array.from({ length: 300 }, (_, k) => `x-${String(1 + 6 * k).padStart(6, '0')}`);
      expect(seen).toEqual(expected);
      const last = await runtime.list({ limit: 100, cursor: Buffer.from('x-099950').toString('base64url') });
      expect(last.items.map((item) => item.executionId)).toEqual(
        Array.from({ length: 49 }, (_, k) => `x-${String(99_951 + k).padStart(6, '0')}`),
      );
      expect(last.nextCursor).toBeUndefined();
      await runtime.close();
    } finally {
      await stores.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
