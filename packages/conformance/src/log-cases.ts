/** L1 (append-only, dense), L2 (one start), L6 (terminal is last) and same-seq races. */
import {
  DuplicateEnvelopeIdError,
  DuplicateSequenceError,
  type EventType,
  ExecutionAlreadyExistsError,
  ExecutionTerminatedError,
  InvalidAppendError,
  SequenceGapError,
} from '@skein/workflow-runtime';
import { expect, it } from 'vitest';
import { appendOf, draft, drafts, start, typesOf } from './drafts.js';
import type { EventStoreSuiteOptions } from './event-store-suite.js';
import { outcomeNames, rejectionOf, withStores } from './harness.js';

const terminalTypes: EventType[] = [
  'EXECUTION_COMPLETED',
  'EXECUTION_FAILED',
  'EXECUTION_CANCELLED',
  'EXECUTION_DEAD_LETTERED',
];

/** Register the L1, L2 and L6 cases. */
export function logCases({ open }: EventStoreSuiteOptions): void {
  it('L1: seq starts at 0 and is dense; read returns what was written, in order', () =>
    withStores(open, async ({ events }) => {
      const started = draft('EXECUTION_STARTED', '{"input":1}', 1000);
      await events.acquireFence('l1');
      const fence = await events.acquireFence('l1');
      expect(await events.append(appendOf('l1', { seq: 0, fence }, [started]))).toEqual({
        lastSeq: 0,
        status: 'pending',
      });
      const more = drafts('STEP_STARTED', 'STEP_COMPLETED', 'STEP_STARTED');
      expect(await events.append(appendOf('l1', { seq: 1, fence }, more))).toEqual({
        lastSeq: 3,
        status: 'running',
      });
      const log = await events.read('l1');
      expect(log.map((event) => event.seq)).toEqual([0, 1, 2, 3]);
      expect(log[0]).toEqual({ ...started, executionId: 'l1', seq: 0, fence });
      expect(log.slice(1).map((event) => event.envelopeId)).toEqual(more.map((event) => event.envelopeId));
      expect((await events.read('l1', 2)).map((event) => event.seq)).toEqual([2, 3]);
      expect((await events.read('l1', 1, 2)).map((event) => event.seq)).toEqual([1, 2]);
      expect(await events.read('nobody')).toEqual([]);
    }));

  it('L1: a gap is refused with SequenceGapError and writes nothing', () =>
    withStores(open, async ({ events }) => {
      await start(events, 'gap');
      const error = await rejectionOf(events.append(appendOf('gap', { seq: 2 }, drafts('STEP_STARTED'))));
      expect(error).toBeInstanceOf(SequenceGapError);
      expect(error).toMatchObject({ executionId: 'gap', seq: 2, expected: 1 });
      const first = await rejectionOf(events.append(appendOf('fresh', { seq: 1 }, drafts('STEP_STARTED'))));
      expect(first).toBeInstanceOf(SequenceGapError);
      expect(await typesOf(events, 'gap')).toEqual(['EXECUTION_STARTED']);
      expect(await events.getExecution('fresh')).toBeNull();
    }));

  it('L1: a taken seq is refused with DuplicateSequenceError and writes nothing', () =>
    withStores(open, async ({ events }) => {
      await start(events, 'dup');
      await events.append(appendOf('dup', { seq: 1 }, drafts('STEP_STARTED', 'STEP_COMPLETED')));
      const error = await rejectionOf(events.append(appendOf('dup', { seq: 2 }, drafts('STEP_FAILED'))));
      expect(error).toBeInstanceOf(DuplicateSequenceError);
      expect(error).toMatchObject({ executionId: 'dup', seq: 2 });
      expect(await typesOf(events, 'dup')).toEqual(['EXECUTION_STARTED', 'STEP_STARTED', 'STEP_COMPLETED']);
    }));

  it('L1: a reused envelope id is refused with DuplicateEnvelopeIdError and writes nothing of the batch', () =>
    withStores(open, async ({ events }) => {
      await start(events, 'a');
      await start(events, 'b');
      const [taken] = await events.read('a');
      const reused = { ...draft('STEP_COMPLETED'), envelopeId: taken!.envelopeId };
      const error = await rejectionOf(
        events.append(appendOf('b', { seq: 1 }, [draft('STEP_STARTED'), reused])),
      );
      expect(error).toBeInstanceOf(DuplicateEnvelopeIdError);
      expect(error).toMatchObject({ executionId: 'b', envelopeId: taken!.envelopeId });
      const twice = draft('STEP_STARTED');
      const within = await rejectionOf(
        events.append(appendOf('b', { seq: 1 }, [twice, { ...twice, type: 'STEP_COMPLETED' }])),
      );
      expect(within).toBeInstanceOf(DuplicateEnvelopeIdError);
      const alone = await rejectionOf(events.append(appendOf('b', { seq: 1 }, [reused])));
      expect(alone).toMatchObject({ name: DuplicateEnvelopeIdError.name, executionId: 'b' });
      expect(await typesOf(events, 'b')).toEqual(['EXECUTION_STARTED']);
      expect(await events.getExecution('b')).toMatchObject({ sequence: 0, status: 'pending' });
      expect(await events.append(appendOf('b', { seq: 1 }, drafts('STEP_STARTED')))).toEqual({
        lastSeq: 1,
        status: 'running',
      });
    }));

  it('L2: seq 0, and only seq 0, is EXECUTION_STARTED', () =>
    withStores(open, async ({ events }) => {
      const wrongFirst = await rejectionOf(events.append(appendOf('l2', { seq: 0 }, drafts('STEP_STARTED'))));
      expect(wrongFirst).toBeInstanceOf(InvalidAppendError);
      await start(events, 'l2');
      const second = await rejectionOf(
        events.append(appendOf('l2', { seq: 1 }, drafts('EXECUTION_STARTED'))),
      );
      expect(second).toBeInstanceOf(InvalidAppendError);
      expect(await typesOf(events, 'l2')).toEqual(['EXECUTION_STARTED']);
    }));

  it('L2: of 12 racing starts exactly one wins; the rest get ExecutionAlreadyExistsError', () =>
    withStores(open, async ({ events }) => {
      const racers = Array.from({ length: 12 }, (_, i) =>
        events.append(appendOf('race', { seq: 0, workflow: `wf-${i}` }, drafts('EXECUTION_STARTED'))),
      );
      const names = outcomeNames(await Promise.allSettled(racers));
      expect(names.filter((name) => name === 'fulfilled')).toHaveLength(1);
      expect(names.filter((name) => name === ExecutionAlreadyExistsError.name)).toHaveLength(11);
      const winner = names.indexOf('fulfilled');
      expect(await events.read('race')).toHaveLength(1);
      expect(await events.getExecution('race')).toMatchObject({ workflow: `wf-${winner}`, sequence: 0 });
    }));

  it('L1: of 10 concurrent appends at the same seq exactly one wins', () =>
    withStores(open, async ({ events }) => {
      await start(events, 'same-seq');
      const racers = Array.from({ length: 10 }, () =>
        events.append(appendOf('same-seq', { seq: 1 }, drafts('STEP_STARTED'))),
      );
      const names = outcomeNames(await Promise.allSettled(racers));
      expect(names.filter((name) => name === 'fulfilled')).toHaveLength(1);
      expect(names.filter((name) => name === DuplicateSequenceError.name)).toHaveLength(9);
      expect(await events.read('same-seq')).toHaveLength(2);
    }));

  for (const terminal of terminalTypes) {
    it(`L6: nothing is appended after ${terminal}`, () =>
      withStores(open, async ({ events }) => {
        await start(events, 'done');
        const { status } = await events.append(
          appendOf('done', { seq: 1 }, drafts('STEP_STARTED', terminal)),
        );
        const error = await rejectionOf(events.append(appendOf('done', { seq: 3 }, drafts('STEP_STARTED'))));
        expect(error).toBeInstanceOf(ExecutionTerminatedError);
        expect(error).toMatchObject({ executionId: 'done', status });
        expect(await typesOf(events, 'done')).toEqual(['EXECUTION_STARTED', 'STEP_STARTED', terminal]);
      }));
  }

  for (const terminal of ['EXECUTION_FAILED', 'EXECUTION_DEAD_LETTERED'] as const) {
    it(`L6 (adr/0067): an operator's EXECUTION_REDRIVEN may follow ${terminal}; it is running again`, () =>
      withStores(open, async ({ events }) => {
        await start(events, 'redrive');
        await events.append(appendOf('redrive', { seq: 1 }, drafts(terminal)));
        const { status } = await events.append(
          appendOf('redrive', { seq: 2 }, drafts('EXECUTION_REDRIVEN', 'STEP_STARTED')),
        );
        expect(status).toBe('running');
        expect(await events.getExecution('redrive')).toMatchObject({ status: 'running', sequence: 3 });
        expect(await typesOf(events, 'redrive')).toEqual([
          'EXECUTION_STARTED',
          terminal,
          'EXECUTION_REDRIVEN',
          'STEP_STARTED',
        ]);
      }));
  }

  for (const terminal of ['EXECUTION_COMPLETED', 'EXECUTION_CANCELLED'] as const) {
    it(`L6 (adr/0067): EXECUTION_REDRIVEN after ${terminal} is refused; nothing is written`, () =>
      withStores(open, async ({ events }) => {
        await start(events, 'final');
        await events.append(appendOf('final', { seq: 1 }, drafts(terminal)));
        const error = await rejectionOf(
          events.append(appendOf('final', { seq: 2 }, drafts('EXECUTION_REDRIVEN'))),
        );
        expect(error).toBeInstanceOf(ExecutionTerminatedError);
        expect(await typesOf(events, 'final')).toEqual(['EXECUTION_STARTED', terminal]);
      }));
  }

  it('L6 (adr/0067): EXECUTION_REDRIVEN reopens only as the first event of its append', () =>
    withStores(open, async ({ events }) => {
      await start(events, 'second');
      await events.append(appendOf('second', { seq: 1 }, drafts('EXECUTION_FAILED')));
      const error = await rejectionOf(
        events.append(appendOf('second', { seq: 2 }, drafts('STEP_STARTED', 'EXECUTION_REDRIVEN'))),
      );
      expect(error).toBeInstanceOf(InvalidAppendError);
      expect(await typesOf(events, 'second')).toEqual(['EXECUTION_STARTED', 'EXECUTION_FAILED']);
      expect(await events.getExecution('second')).toMatchObject({ status: 'failed' });
    }));

  it('L6: a terminal event must be the last of its batch; nothing is written otherwise', () =>
    withStores(open, async ({ events }) => {
      await start(events, 'late');
      const batch = drafts('EXECUTION_COMPLETED', 'STEP_STARTED');
      const error = await rejectionOf(events.append(appendOf('late', { seq: 1 }, batch)));
      expect(error).toBeInstanceOf(InvalidAppendError);
      expect(await typesOf(events, 'late')).toEqual(['EXECUTION_STARTED']);
      expect(await events.getExecution('late')).toMatchObject({ status: 'pending', sequence: 0 });
    }));
}
