/**
 * Creating a fan-out from a synchronous items source on SQLite (a synchronous store) gives the
 * event loop a turn between pages: timers (the process's lease renewals among them) run while
 * a large plan is seeded, instead of waiting for the whole creation. A real SQLite file.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStores } from '@skein/store-sqlite';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTask } from '../src/index.js';
import { createFanOut } from '../src/index-internal.js';

const task = defineTask({ name: 'score', input: z.object({ i: z.number() }), run: async ({ i }) => i });

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('createFanOut gives the event loop turns', () => {
  it('F2: a timer fires while 50 000 items from a synchronous source are seeded into SQLite', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'skein-fan-out-turns-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const stores = openSqliteStores({ path: join(dir, 'skein.db'), durability: 'normal' });
    cleanups.push(() => stores.close());
    const total = 50_000;
    let pagesRead = 0;
    // A timer as a lease keeper runs one: each firing records how far the seeding had got.
    const firedAtPage: number[] = [];
    const timer = setInterval(() => firedAtPage.push(pagesRead), 1);
    cleanups.push(() => clearInterval(timer));
    const row = await createFanOut({
      home: stores.fanOuts,
      shards: { main: stores.fanOuts },
      plan: {
        fanOutId: 'big',
        executionId: 'exec-big',
        name: 'cases',
        task: 'score',
        taskVersion: 1,
        chunkSize: 100,
        shards: ['main'],
        required: true,
        maxAttempts: 3,
      },
      task,
      items: (from, limit) => {
        pagesRead += 1;
        return Array.from({ length: Math.max(0, Math.min(limit, total - from)) }, (_, k) => ({
          i: from + k,
        }));
      },
      owner: 'creator',
    });
    const pages = pagesRead;
    clearInterval(timer);
    expect(row).toMatchObject({ status: 'dispatched', total, seededItems: total });
    // The timer ran between pages, before the last one was read: the loop was not held throughout.
    expect(firedAtPage.filter((page) => page > 0 && page < pages)).not.toEqual([]);
  });
});
