/** L7 at the store: the payload size limit, and odd text that must round-trip exactly. */
import { DEFAULT_MAX_PAYLOAD_BYTES, type EventStore, PayloadTooLargeError } from '@skein/workflow-runtime';
import { encode } from '@skein/workflow-runtime/internal';
import { expect, it } from 'vitest';
import { appendOf, draft, start, typesOf } from './drafts.js';
import type { EventStoreSuiteOptions } from './event-store-suite.js';
import { rejectionOf, withStores } from './harness.js';

const ODD = `quotes ' " \` \\ ; -- /* */ % _ ünïcødé 中文 עברית 🧵👩‍👩‍👧 \u2028\u2029 \t\r\n \u{10FFFF} \uFFFD`;
const NUL = 'nul \u0000 inside';

/** Register the payload cases. */
export function payloadCases({
  open,
  maxPayloadBytes = DEFAULT_MAX_PAYLOAD_BYTES,
  unsupported,
}: EventStoreSuiteOptions): void {
  it('L7: a payload of exactly the limit (in UTF-8 bytes) is written; one byte more is refused and writes nothing', () =>
    withStores(open, async ({ events }) => {
      // 'é' is two UTF-8 bytes: the size is counted in bytes, not UTF-16 units.
      const atLimit = `${'x'.repeat(maxPayloadBytes - 2)}é`;
      await start(events, 'size');
      await events.append(appendOf('size', { seq: 1 }, [draft('STEP_COMPLETED', atLimit)]));
      const error = await rejectionOf(
        events.append(
          appendOf('size', { seq: 2 }, [draft('STEP_STARTED'), draft('STEP_COMPLETED', `${atLimit}x`)]),
        ),
      );
      expect(error).toBeInstanceOf(PayloadTooLargeError);
      expect(error).toMatchObject({
        executionId: 'size',
        bytes: maxPayloadBytes + 1,
        limit: maxPayloadBytes,
      });
      expect(await typesOf(events, 'size')).toEqual(['EXECUTION_STARTED', 'STEP_COMPLETED']);
      const [, written] = await events.read('size');
      expect(written!.payload).toBe(atLimit);
    }));

  it('payloads and execution ids with unicode, emoji, quotes and SQL-ish text round-trip exactly', () =>
    withStores(open, async ({ events }) => {
      await roundTrip(events, `id ${ODD}`, [ODD, encode({ text: ODD, nul: NUL, list: [ODD] })]);
    }));

  const nulTitle = 'payloads and execution ids with U+0000 round-trip exactly';
  if (unsupported?.nulInText !== undefined)
    it.skip(`${nulTitle} (unsupported: ${unsupported.nulInText})`, () => {});
  else {
    it(nulTitle, () =>
      withStores(open, async ({ events }) => {
        await roundTrip(events, `id ${NUL}`, [NUL, `${NUL}\u0000`]);
        expect(await events.getExecution(`id ${NUL.slice(0, 4)}`)).toBeNull();
      }),
    );
  }
}

/** Write `payloads` to `executionId` and read back ids, payloads, index row and listing unchanged. */
async function roundTrip(events: EventStore, executionId: string, payloads: string[]): Promise<void> {
  await events.append(
    appendOf(executionId, { seq: 0, workflow: `wf ${executionId}` }, [
      draft('EXECUTION_STARTED', payloads[0]),
    ]),
  );
  await events.append(
    appendOf(
      executionId,
      { seq: 1 },
      payloads.slice(1).map((payload) => draft('STEP_COMPLETED', payload)),
    ),
  );
  const log = await events.read(executionId);
  expect(log.map((event) => event.payload)).toEqual(payloads);
  expect(log.every((event) => event.executionId === executionId)).toBe(true);
  expect(await events.getExecution(executionId)).toMatchObject({
    executionId,
    workflow: `wf ${executionId}`,
  });
  const page = await events.listExecutions({ workflow: `wf ${executionId}`, limit: 1 });
  expect(page.items.map((item) => item.executionId)).toEqual([executionId]);
  const fence = await events.acquireFence(executionId);
  expect(await events.currentFence(executionId)).toBe(fence);
}
