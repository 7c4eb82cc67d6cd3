/**
 * Issue 25.5: whatever a body or a step throws (a null-prototype object with a method, a
 * revoked Proxy, an object whose toString throws), the execution fails with a recorded error:
 * it never stays `running`, and with a Supervisor a completed step never runs again.
 */
import { Supervisor } from '@skein/worker-runtime-local';
import { defineWorkflow, type EndedPayload } from '@skein/workflow-runtime';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { count, harness, types, until } from './support/sqlite.js';

const h = harness();

const unprintables: [string, () => unknown][] = [
  [
    'a null-prototype object with a method',
    () => Object.assign(Object.create(null) as object, { explain: () => 'no' }),
  ],
  [
    'a revoked Proxy',
    () => {
      const { proxy, revoke } = Proxy.revocable({}, {});
      revoke();
      return proxy;
    },
  ],
  [
    'an object whose toString throws',
    () => ({
      toString() {
        throw new Error('toString refuses');
      },
    }),
  ],
];

function workflows(make: () => unknown, where: 'body' | 'step', ran: { count: number }) {
  return defineWorkflow({
    name: `throws-from-${where}`,
    input: z.object({}),
    async run(ctx) {
      await ctx.step('done-once', () => {
        ran.count += 1;
        return 'ok';
      });
      if (where === 'step') {
        return ctx.step('throws', () => {
          throw make();
        });
      }
      throw make();
    },
  });
}

describe.each(unprintables)('25.5: a thrown %s', (_, make) => {
  for (const where of ['body', 'step'] as const) {
    it(`thrown from the ${where}: the execution fails with a recorded error`, async () => {
      const db = h.db();
      const ran = { count: 0 };
      const workflow = workflows(make, where, ran);
      const runtime = h.runtime({ stores: db.stores, workflows: [workflow] });
      const handle = await runtime.start(workflow, {}, { executionId: `throw-${where}` });
      await expect(handle.result()).rejects.toThrow();
      const log = await runtime.history(`throw-${where}`);
      expect(types(log).at(-1)).toBe('EXECUTION_FAILED');
      const ended = log.at(-1)!.payload as EndedPayload;
      expect(ended.error).toBeDefined();
      expect(ran.count).toBe(1);
    });

    it(`thrown from the ${where} under a Supervisor: failed once, the completed step never runs again`, async () => {
      const db = h.db();
      const ran = { count: 0 };
      const workflow = workflows(make, where, ran);
      const runtime = h.runtime({ stores: db.stores, workflows: [workflow], lease: { ttlMs: 300 } });
      const supervisor = new Supervisor({
        runtime,
        stores: db.stores,
        leaseTtlMs: 300,
        tickIntervalMs: 50,
      });
      await runtime.enqueue(workflow, {}, { executionId: `sup-${where}` });
      supervisor.start();
      try {
        await until(async () => (await runtime.loadState(`sup-${where}`))?.status === 'failed');
        // A few lease lifetimes more: a recovery would run the completed step again.
        await new Promise((resolve) => setTimeout(resolve, 1_000));
      } finally {
        await supervisor.stop();
      }
      const log = await runtime.history(`sup-${where}`);
      expect(types(log).at(-1)).toBe('EXECUTION_FAILED');
      // One takeover of the pending execution by the supervisor's claim, and no recovery after.
      expect(count(log, 'EXECUTION_RECOVERED')).toBe(1);
      expect(count(log, 'EXECUTION_FAILED')).toBe(1);
      expect(ran.count).toBe(1);
    });
  }
});
