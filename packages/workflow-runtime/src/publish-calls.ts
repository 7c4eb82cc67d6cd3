/**
 * The body's side of published events and durable streams (adr/0050, adr/0051): `ctx.setEvent`
 * and `ctx.stream(name).write` are positional calls recorded as `STEP_COMPLETED` (`kind:
 * 'event'` or `'stream'`) and made durable before they resolve, so a reader of the log sees
 * them as soon as the call returns. Replay finds the record at the call's position, writes
 * nothing and resolves with what the record says.
 */
import type { WorkflowStream } from './context-api.js';
import { assertName } from './ids.js';
import type { RunInternals } from './run-internals.js';

/** `ctx.setEvent(key, value)`; see the module comment. */
export async function publishEvent(run: RunInternals, key: string, value: unknown): Promise<void> {
  assertName(key, 'ctx.setEvent call', 'key');
  const { position, record } = run.next('event', key);
  if (record?.status === 'completed') return;
  run.writer.record(
    'STEP_COMPLETED',
    { position, name: key, kind: 'event', output: value },
    `event "${key}"`,
  );
  await run.track(() => run.writer.flush());
}

/** `ctx.stream(name)`: checked at the call; `write` takes its position when it is called. */
export function streamOf(name: string, write: (value: unknown) => Promise<number>): WorkflowStream {
  assertName(name, 'ctx.stream call', 'name');
  return Object.freeze({ name, write });
}

/** One `write` of stream `name`: resolves with its offset once durable. */
export async function writeStream(run: RunInternals, name: string, value: unknown): Promise<number> {
  const { position, record } = run.next('stream', name);
  if (record?.status === 'completed') return record.output as number;
  const offset = run.state().streams?.find((stream) => stream.name === name)?.next ?? 0;
  run.writer.record(
    'STEP_COMPLETED',
    { position, name, kind: 'stream', output: { offset, value } },
    `write ${offset} of stream "${name}"`,
  );
  await run.track(() => run.writer.flush());
  return offset;
}
