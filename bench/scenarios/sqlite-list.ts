/**
 * `runtime.list` on SQLite over many executions (issue #5): the time of one page of 100, for
 * the first page and deep pages, unfiltered and filtered by status and workflow.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStores } from '@skein/store-sqlite';
import { createRuntime, defineWorkflow, type ListQuery } from '@skein/workflow-runtime';
import { encode, newId } from '@skein/workflow-runtime/internal';
import { z } from 'zod';
import { median, nowMs } from '../measure.js';
import type { Row } from '../report.js';

/** Counts of the scenario. */
export interface ListSizes {
  executions: number;
  samples: number;
}

export const listFullSizes: ListSizes = { executions: 100_000, samples: 200 };
export const listSmokeSizes: ListSizes = { executions: 2_000, samples: 5 };

const noop = defineWorkflow({ name: 'noop', input: z.null(), run: async () => null });

/** Measure pages of 100 over `sizes.executions` executions written straight into the store. */
export async function sqliteList(sizes: ListSizes): Promise<Row[]> {
  const dir = mkdtempSync(join(tmpdir(), 'skein-bench-list-'));
  const stores = openSqliteStores({ path: join(dir, 'bench.db'), durability: 'normal' });
  try {
    for (let start = 0; start < sizes.executions; start += 2000) {
      const ids = Array.from({ length: Math.min(2000, sizes.executions - start) }, (_, k) => start + k);
      await Promise.all(
        ids.map((i) =>
          stores.events.append({
            executionId: `x-${String(i).padStart(7, '0')}`,
            workflow: i % 2 ? 'odd' : 'even',
            expectedSeq: 0,
            fence: 0,
            events: [
              {
                envelopeId: newId(),
                type: 'EXECUTION_STARTED',
                payload: encode({ version: 1 }),
                recordedAt: 1,
              },
              ...(i % 3 === 1
                ? [
                    {
                      envelopeId: newId(),
                      type: 'EXECUTION_SUSPENDED' as const,
                      payload: '{}',
                      recordedAt: 2,
                    },
                  ]
                : []),
            ],
          }),
        ),
      );
    }
    const runtime = createRuntime({ stores, workflows: [noop] });
    const deep = Buffer.from(`x-${String(Math.floor(sizes.executions * 0.9)).padStart(7, '0')}`).toString(
      'base64url',
    );
    const cases: [string, ListQuery][] = [
      ['first page, unfiltered', { limit: 100 }],
      ['page at 90%, unfiltered', { limit: 100, cursor: deep }],
      ['first page, status suspended + workflow odd', { limit: 100, status: 'suspended', workflow: 'odd' }],
      ['page at 90%, status suspended', { limit: 100, status: 'suspended', cursor: deep }],
    ];
    const rows: Row[] = [];
    for (const [name, query] of cases) {
      const samples: number[] = [];
      for (let i = 0; i < sizes.samples; i++) {
        const t = nowMs();
        await runtime.list(query);
        samples.push(nowMs() - t);
      }
      rows.push({
        metric: `list 100 of ${sizes.executions} executions, ${name}, median`,
        value: median(samples),
        unit: 'ms',
      });
    }
    await runtime.close();
    return rows;
  } finally {
    await stores.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
