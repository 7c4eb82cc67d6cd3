/**
 * Issue 15.6: binary payloads round-trip. A Uint8Array comes back as a Uint8Array and a
 * Buffer as a Buffer, live and on replay alike, through the real stores; bytes count against
 * the payload limit as their base64 text (4 bytes of text per 3 of data).
 */
import { defineWorkflow, PayloadTooLargeError, type StepFailedError } from '@skein/workflow-runtime';
import { encode } from '@skein/workflow-runtime/internal';
import { describe, expect, test } from 'vitest';
import { z } from 'zod';
import { backings, harness, until } from './support/stores.js';

const T0 = Date.UTC(2026, 0, 1);

/** What a body can tell about bytes: their type and their content. */
function describeBytes(value: unknown): unknown {
  if (!(value instanceof Uint8Array)) return { notBytes: value };
  const type = (Object.getPrototypeOf(value) as { constructor: { name: string } }).constructor.name;
  return { buffer: Buffer.isBuffer(value), type, bytes: [...value] };
}

describe.each(backings)('binary payloads (%s store)', (_, open) => {
  const h = harness(open);

  test('step outputs, inputs and signal payloads of bytes are the same live and after a restart', async () => {
    const backing = h.open();
    const seen: unknown[] = [];
    const workflow = defineWorkflow({
      name: 'bytes',
      input: z.object({ seed: z.instanceof(Uint8Array) }),
      signals: { blob: z.instanceof(Buffer) },
      async run(ctx, { seed }) {
        const raw = await ctx.step('raw', () => new Uint8Array([seed[0] ?? 0, 255, 0]));
        const buffer = await ctx.step('buffer', () => Buffer.from('héllo'));
        const view = await ctx.step('view', () => Buffer.from('abcdefgh').subarray(2, 5));
        const blob = await ctx.waitForSignal<Buffer>('blob');
        seen.push([seed, raw, buffer, view, blob].map(describeBytes));
        await ctx.sleep('replay-point', 60_000);
        return { sum: raw.length + buffer.length + view.length + blob.length, text: buffer.toString('utf8') };
      },
    });
    const first = h.runtime({ stores: backing.stores, workflows: [workflow], clock: () => T0 });
    await first.start(workflow, { seed: new Uint8Array([7]) }, { executionId: 'bytes-1' });
    await until(async () => (await first.loadState('bytes-1'))?.status === 'suspended');
    await first.signal('bytes-1', 'blob', Buffer.from([1, 2, 3, 4]));
    await until(() => seen.length === 1);
    await first.close();
    const restarted = h.runtime({
      stores: backing.reopen(),
      workflows: [workflow],
      clock: () => T0 + 60_000,
    });
    const done = await restarted.wake('bytes-1');
    expect(done).toMatchObject({ status: 'completed', output: { sum: 3 + 6 + 3 + 4, text: 'héllo' } });
    expect(seen[1]).toStrictEqual(seen[0]);
    const [seed, raw, buffer, view, blob] = seen[0] as { buffer: boolean; bytes: number[] }[];
    expect(seed).toMatchObject({ buffer: false, type: 'Uint8Array', bytes: [7] });
    expect(raw).toMatchObject({ buffer: false, type: 'Uint8Array', bytes: [7, 255, 0] });
    expect(buffer).toMatchObject({ buffer: true, type: 'Buffer', bytes: [...Buffer.from('héllo')] });
    expect(view).toMatchObject({ buffer: true, bytes: [...Buffer.from('cde')] });
    expect(blob).toMatchObject({ buffer: true, bytes: [1, 2, 3, 4] });
    const state = await restarted.loadState('bytes-1');
    expect(state?.steps.map((step) => describeBytes(step.output))).toStrictEqual([raw, buffer, view]);
  });

  test('bytes count as base64 against the limit: just under fits, just over fails the step at once', async () => {
    const limit = 4_096;
    const { stores } = h.open({ maxPayloadBytes: limit });
    // The payload around the output: everything but the base64 text of the bytes.
    const overhead = encode({
      position: 0,
      name: 'bytes',
      kind: 'step',
      output: new Uint8Array(0),
      attempt: 1,
    }).length;
    const fits = Math.floor((limit - overhead) / 4) * 3;
    let attempts = 0;
    const workflow = defineWorkflow({
      name: 'sized',
      input: z.number(),
      async run(ctx, size) {
        try {
          const out = await ctx.step(
            'bytes',
            () => {
              attempts += 1;
              return new Uint8Array(size);
            },
            { retry: { maxAttempts: 3, initialMs: 1 } },
          );
          return out.length;
        } catch (error) {
          return (error as StepFailedError).cause instanceof PayloadTooLargeError
            ? 'too large'
            : String(error);
        }
      },
    });
    const runtime = h.runtime({ stores, workflows: [workflow], maxPayloadBytes: limit });
    expect(await (await runtime.start(workflow, fits, { executionId: 'fits' })).result()).toBe(fits);
    expect(attempts).toBe(1);
    expect(await (await runtime.start(workflow, fits + 3, { executionId: 'over' })).result()).toBe(
      'too large',
    );
    expect(attempts).toBe(2);
  });
});
