/**
 * Where each µs of a SQLite step's CPU goes (issue #26): the step-cost ladder's rungs
 * (step-cost.ts) split into what each layer adds, and the runtime's share split further by
 * timing its parts alone in this process — encoding the step's two payloads, their two
 * envelope ids, folding the two events — leaving the context call, the promise hops and the
 * scheduling as the rest. CPU time (process.cpuUsage), so another process's load moves it
 * less than wall time.
 */
import { applyEvent, defaultCodec, type FoldableEvent, newId } from '@skein/workflow-runtime/internal';
import type { Row } from '../report.js';

/** The CPU of one call of each rung, in µs. */
export interface RungCpu {
  raw: number;
  hand: number;
  store: number;
  runtime: number;
}

/** CPU µs of one call of `fn`, over `n` calls. */
function cpuPerCall(n: number, fn: (i: number) => void): number {
  for (let i = 0; i < Math.min(n, 1000); i++) fn(i);
  const start = process.cpuUsage();
  for (let i = 0; i < n; i++) fn(i);
  const used = process.cpuUsage(start);
  return (used.user + used.system) / n;
}

/** A started execution's state, the fold's input of a step. */
function startedState(): ReturnType<typeof applyEvent> {
  return applyEvent(null, {
    executionId: 'breakdown',
    seq: 0,
    type: 'EXECUTION_STARTED',
    payload: { workflow: 'bench-steps-10', version: 1, input: { n: 1 } },
    fence: 0,
    recordedAt: 0,
  } as FoldableEvent);
}

/** The runtime's parts of a step, timed alone: µs each. */
export function runtimeParts(n: number): { encode: number; ids: number; fold: number } {
  const encode = cpuPerCall(n, (i) => {
    defaultCodec.record({ position: i % 10, name: `s${i % 10}`, kind: 'step', output: i, attempt: 1 });
    defaultCodec.record({ position: (i % 10) + 1, name: `s${(i % 10) + 1}`, attempt: 1 });
  });
  const ids = cpuPerCall(n, () => {
    newId();
    newId();
  });
  let state = startedState();
  const fold = cpuPerCall(n, (i) => {
    const position = i % 10;
    if (position === 0) state = startedState();
    const seq = state.sequence + 1;
    const event = (type: string, s: number, payload: object) =>
      ({ executionId: 'breakdown', seq: s, type, payload, fence: 0, recordedAt: i }) as FoldableEvent;
    state = applyEvent(state, event('STEP_STARTED', seq, { position, name: `s${position}`, attempt: 1 }));
    state = applyEvent(
      state,
      event('STEP_COMPLETED', seq + 1, {
        position,
        name: `s${position}`,
        kind: 'step',
        output: i,
        attempt: 1,
      }),
    );
  });
  return { encode, ids, fold };
}

/** The table: one row per part, its µs of CPU and its share of the step. */
export function breakdownRows(
  durability: string,
  rungs: RungCpu,
  parts: ReturnType<typeof runtimeParts>,
): Row[] {
  const inRuntime = rungs.runtime - rungs.store;
  const rest = inRuntime - parts.encode - parts.ids - parts.fold;
  const lines: [string, number][] = [
    ['SQLite: a raw single-row commit (the floor)', rungs.raw],
    [
      "SQLite: the step's statements beyond it (BEGIN, data_version, 2 INSERTs into 3 b-trees, COMMIT's extra pages)",
      rungs.hand - rungs.raw,
    ],
    [
      'store: group commit (queue, setImmediate hop, promise), checkAppend, head cache',
      rungs.store - rungs.hand,
    ],
    ['runtime: encode 2 payloads (codec.record)', parts.encode],
    ['runtime: 2 envelope ids (ULID)', parts.ids],
    ['runtime: fold 2 events (applyEvent)', parts.fold],
    ['runtime: the rest (context call, replay check, promise hops, deliveries, snapshot check)', rest],
  ];
  return lines.map(([what, us]) => ({
    metric: `${durability}: where a step's CPU goes: ${what} (${((us / rungs.runtime) * 100).toFixed(0)}%)`,
    value: us,
    unit: 'µs',
  }));
}
