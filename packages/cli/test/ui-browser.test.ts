/**
 * `skein ui` in a real browser: the built executable serves a SQLite file a real runtime
 * wrote; headless Chromium filters the executions, opens timelines, pages through a
 * 10,000-event history, and cancels an execution, whose log then holds CANCEL_REQUESTED.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openSqliteStores, type SqliteStores } from '@skein/store-sqlite';
import { createRuntime, defineWorkflow } from '@skein/workflow-runtime';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ensureBuilt, type Spawned, spawnSkein } from './support/binary.js';
import { launchChromium, whenChromium } from './support/browser.js';
import { FIXTURE, populate } from './support/fixture.js';

/** 2,000 steps and 6,000 recorded random values: 10,000 events after seq 0 and before the end. */
const big = defineWorkflow({
  name: 'big',
  input: z.object({}),
  async run(ctx) {
    for (let i = 0; i < 2_000; i++) await ctx.step(`item-${i}`, () => i);
    for (let i = 0; i < 6_000; i++) ctx.random();
    return 'done';
  },
});

whenChromium(() => {
  describe('skein ui in headless Chromium', () => {
    const dir = mkdtempSync(join(tmpdir(), 'skein-ui-'));
    const path = join(dir, 'skein.db');
    let stores: SqliteStores;
    let server: Spawned;
    let readOnly: Spawned;
    let base: string;
    let browser: BrowserContext;
    let page: Page;

    beforeAll(async () => {
      await ensureBuilt();
      stores = openSqliteStores({ path });
      await populate(stores);
      const runtime = createRuntime({ stores, workflows: [big] });
      await (await runtime.start(big, {}, { executionId: 'big-1' })).result();
      await runtime.close();
      server = spawnSkein(['--db', path, 'ui', '--port', '0', '--allow-actions']);
      base = (await server.waitFor(/skein ui: (http:\/\/127\.0\.0\.1:\d+)\//))[1]!;
      readOnly = spawnSkein(['--db', path, 'ui', '--port', '0']);
      browser = await launchChromium();
      page = await browser.newPage();
    }, 600_000);

    afterAll(async () => {
      await browser?.close();
      for (const child of [server, readOnly]) {
        child?.child.kill('SIGTERM');
        await child?.exited;
      }
      await stores?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    const ids = async () =>
      page
        .locator('#executions tbody tr')
        .evaluateAll((rows) => rows.map((r) => r.getAttribute('data-execution')));

    it('lists every execution and filters by status and workflow', async () => {
      await page.goto(`${base}/executions`);
      expect((await ids()).sort()).toEqual([...Object.keys(FIXTURE), 'big-1'].sort());
      await page.selectOption('#status-filter', 'suspended');
      await page.click('#apply-filters');
      await page.waitForURL(/status=suspended/);
      expect((await ids()).sort()).toEqual(['nap-1', 'order-waiting']);
      await page.fill('#workflow-filter', 'order');
      await page.click('#apply-filters');
      await page.waitForURL(/workflow=order/);
      expect(await ids()).toEqual(['order-waiting']);
      await page.goto(`${base}/executions?limit=3`);
      expect(await ids()).toHaveLength(3);
      await page.click('#next-page');
      await page.waitForURL(/cursor=/);
      expect(await ids()).toHaveLength(3);
    });

    it("opens a timeline: calls with duration bars, each retry's error, the writers and fences", async () => {
      await page.goto(`${base}/executions`);
      await page.click('a[href="/executions/retried-1"]');
      await page.waitForURL(/\/executions\/retried-1$/);
      const call = page.locator('#calls tr[data-call="0"]');
      await expect.poll(() => call.locator('.bar').count()).toBe(3);
      expect(await call.textContent()).toContain('attempt 1: Error: upstream 503 on attempt 1');
      expect(await call.locator('.bar.retrying').count()).toBe(2);
      expect(await call.locator('.bar.completed').count()).toBe(1);
      expect(await page.locator('#writers').textContent()).toContain('EXECUTION_STARTED');
      const shot = await page.screenshot({ fullPage: true });
      expect(shot.subarray(1, 4).toString()).toBe('PNG');
      if (process.env.SKEIN_DOCS_SCREENSHOT === '1') {
        const images = fileURLToPath(new URL('../../../docs/images/', import.meta.url));
        mkdirSync(images, { recursive: true });
        await page.screenshot({ path: join(images, 'inspector-timeline.png'), fullPage: true });
      }
      await page.goto(`${base}/executions/parent-1`);
      await page.click('a[href="/executions/leaf-of-parent-1"]');
      expect(await page.locator('.fields').textContent()).toContain('parent-1');
      await page.goto(`${base}/dead-letters`);
      expect(await page.locator('#dead-letters').textContent()).toContain(
        'poison: the supervisor tick failed for 5 min',
      );
    });

    it('a 10,000-event history is paged: each page holds at most 200 rows, the last page is reachable', async () => {
      const response = await page.goto(`${base}/executions/big-1`);
      const html = await response!.text();
      expect(html.length).toBeLessThan(400_000);
      expect(await page.locator('#events tbody tr').count()).toBe(200);
      expect(await page.locator('#calls tbody tr').count()).toBe(200);
      expect(await page.locator('#events-pager').textContent()).toContain('page 1 of 51');
      await page.goto(`${base}/executions/big-1?calls=0&events=50`);
      const rows = page.locator('#events tbody tr');
      expect(await rows.count()).toBe(10_002 - 50 * 200);
      expect(await rows.last().getAttribute('data-type')).toBe('EXECUTION_COMPLETED');
    });

    it('cancels an execution from the page: the log holds CANCEL_REQUESTED', async () => {
      await page.goto(`${base}/executions/order-waiting`);
      await page.fill('#cancel-reason', 'cancelled in the browser test');
      await page.click('#cancel-button');
      await page.waitForURL(/done=/);
      expect(await page.locator('#notice').textContent()).toContain('cancellation recorded');
      expect(await page.locator('#events tbody tr[data-type="CANCEL_REQUESTED"]').count()).toBe(1);
      const log = await createRuntime({ stores, workflows: [] }).history('order-waiting');
      expect(log.at(-2)).toMatchObject({
        type: 'CANCEL_REQUESTED',
        payload: { reason: 'cancelled in the browser test' },
      });
    });

    it('read-only by default: no action forms, and a posted action is refused and writes nothing', async () => {
      const readOnlyBase = (await readOnly.waitFor(/skein ui: (http:\/\/127\.0\.0\.1:\d+)\//))[1]!;
      await page.goto(`${readOnlyBase}/executions/nap-1`);
      expect(await page.locator('#read-only').count()).toBe(1);
      expect(await page.locator('#cancel-form').count()).toBe(0);
      const before = (await stores.events.getExecution('nap-1'))!.sequence;
      const refused = await page.evaluate(async (url) => {
        const res = await fetch(url, {
          method: 'POST',
          body: new URLSearchParams({ reason: 'x', token: 'guess' }),
        });
        return res.status;
      }, `${readOnlyBase}/executions/nap-1/cancel`);
      expect(refused).toBe(403);
      // From another origin (a page the user has open elsewhere), even the actions server refuses.
      const foreign = await fetch(`${base}/executions/nap-1/cancel`, {
        method: 'POST',
        headers: { origin: 'http://evil.example', 'content-type': 'application/x-www-form-urlencoded' },
        body: 'reason=x',
      });
      expect(foreign.status).toBe(403);
      expect((await stores.events.getExecution('nap-1'))!.sequence).toBe(before);
    });
  });
});
