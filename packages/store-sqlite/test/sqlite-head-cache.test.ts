/** The append path's head cache: live heads are kept (and updated in place), finished ones are not. */

import { ExecutionTerminatedError } from '@skein/workflow-runtime';
import type { AppendRequest, ExecutionHead } from '@skein/workflow-runtime/spi';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { HeadCache } from '../src/head-cache.js';
import { openTempStores } from './temp-stores.js';

function head(status: ExecutionHead['status'], lastSeq: number): ExecutionHead {
  return { fence: 0, lastSeq, status, workflow: 'wf' };
}

function append(
  executionId: string,
  expectedSeq: number,
  type: AppendRequest['events'][number]['type'],
): AppendRequest {
  return {
    executionId,
    workflow: 'wf',
    expectedSeq,
    fence: 0,
    events: [{ envelopeId: `${executionId}-${expectedSeq}`, type, payload: '{}', recordedAt: 1 }],
  };
}

describe('sqlite head cache', () => {
  const closers: (() => unknown)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0)) await close();
  });

  it('keeps a running head, updates it in place, and forgets it once the status is terminal', () => {
    const db = new Database(':memory:');
    closers.push(() => db.close());
    const cache = new HeadCache(db);
    cache.revalidate();
    const into = head(undefined, -1);

    cache.set('a', head('running', 1));
    expect(cache.get('a', into)).toBe(true);
    expect(into).toEqual(head('running', 1));
    cache.set('a', head('running', 3));
    expect(cache.get('a', into)).toBe(true);
    expect(into.lastSeq).toBe(3);
    expect(cache.size).toBe(1);

    for (const status of ['completed', 'failed', 'cancelled', 'dead_lettered', 'continued'] as const) {
      cache.set('a', head('running', 4));
      cache.set('a', head(status, 5));
      expect(cache.get('a', into)).toBe(false);
      cache.set(`new-${status}`, head(status, 1));
      expect(cache.get(`new-${status}`, into)).toBe(false);
    }
    expect(cache.size).toBe(0);
  });

  it('an append after a terminal event, not cached, is still refused from the row', async () => {
    const stores = openTempStores({ durability: 'normal' });
    closers.push(() => stores.close());
    await stores.events.append(append('done', 0, 'EXECUTION_STARTED'));
    await stores.events.append(append('done', 1, 'EXECUTION_COMPLETED'));
    await expect(stores.events.append(append('done', 2, 'STEP_STARTED'))).rejects.toBeInstanceOf(
      ExecutionTerminatedError,
    );
    expect((await stores.events.read('done')).map((event) => event.type)).toEqual([
      'EXECUTION_STARTED',
      'EXECUTION_COMPLETED',
    ]);
  });
});
