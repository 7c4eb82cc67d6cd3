/**
 * Payloads that JSON loses, through PostgreSQL's text columns: bytes come back as their own
 * type and recorded errors as their class, when a second node (its own pool) replays the
 * execution after the first went away (issues 15.2, 15.6; adr/0020).
 */
import { openPostgresStores, type PostgresStores } from '@skein/store-postgres';
import {
  createRuntime,
  defineWorkflow,
  PayloadTooLargeError,
  type Runtime,
  StepFailedError,
} from '@skein/workflow-runtime';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { dropSchema, freshSchema, PG_URL, whenPostgres } from './support/pg.js';

const T0 = Date.UTC(2026, 0, 1);

class Declined extends Error {
  override name = 'Declined';
  constructor(readonly amount: number) {
    super(`declined ${amount}`);
  }
}

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function node(
  schema: string,
  workflows: Parameters<typeof createRuntime>[0]['workflows'],
  now: number,
) {
  const stores: PostgresStores = await openPostgresStores({
    url: PG_URL,
    schema,
    poolSize: 2,
    maxPayloadBytes: 8_192,
  });
  const runtime: Runtime = createRuntime({ stores, workflows, clock: () => now, maxPayloadBytes: 8_192 });
  closers.push(async () => {
    await runtime.close();
    await stores.close();
  });
  return runtime;
}

async function until(check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met within 10 s');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

whenPostgres(() => {
  describe('payloads JSON loses, on postgres', () => {
    it('bytes and a registered error class are the same on the first run and on a replay by another node', async () => {
      const schema = freshSchema();
      closers.push(() => dropSchema(schema));
      const seen: unknown[] = [];
      const workflow = defineWorkflow({
        name: 'pg-payloads',
        input: z.null(),
        errors: [Declined],
        async run(ctx) {
          const bytes = await ctx.step('bytes', () => ({
            raw: new Uint8Array([0, 1, 255]),
            buf: Buffer.from('zé'),
          }));
          const failure = await ctx
            .step('charge', () => {
              throw new Declined(12);
            })
            .catch((error: unknown) => error as StepFailedError);
          seen.push({
            raw: [Object.getPrototypeOf(bytes.raw) === Uint8Array.prototype, [...bytes.raw]],
            buf: [Buffer.isBuffer(bytes.buf), bytes.buf.toString('utf8')],
            failure: [failure instanceof StepFailedError, failure.cause instanceof Declined, failure.message],
            amount: (failure.cause as Declined).amount,
          });
          await ctx.sleep('replay-point', 60_000);
          return 'done';
        },
      });
      const first = await node(schema, [workflow], T0);
      await first.start(workflow, null, { executionId: 'pg-bytes' });
      await until(async () => (await first.loadState('pg-bytes'))?.status === 'suspended');
      await first.close();
      const second = await node(schema, [workflow], T0 + 60_000);
      expect(await second.wake('pg-bytes')).toMatchObject({ status: 'completed' });
      expect(seen).toHaveLength(2);
      expect(seen[1]).toStrictEqual(seen[0]);
      expect(seen[0]).toEqual({
        raw: [true, [0, 1, 255]],
        buf: [true, 'zé'],
        failure: [true, true, 'execution "pg-bytes": step "charge" failed after 1 attempt: declined 12'],
        amount: 12,
      });
    });

    it('bytes over the limit as base64 are refused before PostgreSQL sees them; the step fails at once', async () => {
      const schema = freshSchema();
      closers.push(() => dropSchema(schema));
      const workflow = defineWorkflow({
        name: 'pg-big-bytes',
        input: z.null(),
        run: (ctx) =>
          ctx
            .step('bytes', () => new Uint8Array(7_000), { retry: { maxAttempts: 3, initialMs: 1 } })
            .then(
              () => 'recorded',
              (error: unknown) =>
                (error as StepFailedError).cause instanceof PayloadTooLargeError ? 'refused' : 'other',
            ),
      });
      const runtime = await node(schema, [workflow], T0);
      // 7,000 bytes are 9,336 characters of base64: over 8 KiB, though the bytes alone are not.
      expect(await (await runtime.start(workflow, null, { executionId: 'pg-big' })).result()).toBe('refused');
      const log = await runtime.history('pg-big');
      expect(log.map((event) => event.type)).toEqual([
        'EXECUTION_STARTED',
        'STEP_STARTED',
        'STEP_FAILED',
        'EXECUTION_COMPLETED',
      ]);
    });
  });
});
