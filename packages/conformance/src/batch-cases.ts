/**
 * L4: appends fired together (a store may commit them in one transaction) each get their own
 * outcome; one execution's stale fence or duplicate never fails another's write.
 */
import {
  DuplicateEnvelopeIdError,
  DuplicateSequenceError,
  type EventStore,
  StaleFenceError,
} from '@skein/workflow-runtime';
import type { AppendRequest } from '@skein/workflow-runtime/spi';
import { expect, it } from 'vitest';
import { appendOf, draft, drafts, start, typesOf } from './drafts.js';
import type { EventStoreSuiteOptions } from './event-store-suite.js';
import { outcomeNames, withStores } from './harness.js';

const EXECUTIONS = 16;

/** Per execution: the requests fired, the outcome each must get, and the log it must end with. */
interface Plan {
  id: string;
  requests: AppendRequest[];
  outcomes: string[];
  log: string[];
}

/** Register the L4 cases. */
export function batchCases({ open }: EventStoreSuiteOptions): void {
  it('L4: in one batch, good appends commit and bad ones fail with their own error', () =>
    withStores(open, async ({ events }) => {
      const plans: Plan[] = [];
      for (let i = 0; i < EXECUTIONS; i += 1) plans.push(await arrange(events, i));
      // Fire every request before awaiting any, so a group-committing store batches them.
      const fired = plans.flatMap((plan) => plan.requests.map((request) => events.append(request)));
      const settled = await Promise.allSettled(fired);
      expect(outcomeNames(settled)).toEqual(plans.flatMap((plan) => plan.outcomes));
      settled.forEach((result, i) => {
        if (result.status === 'rejected') {
          expect(result.reason).toMatchObject({
            executionId: plans.flatMap((p) => p.requests)[i]!.executionId,
          });
        }
      });
      for (const plan of plans) expect(await typesOf(events, plan.id)).toEqual(plan.log);
    }));

  it('L4: two appends for one execution in one batch apply in order', () =>
    withStores(open, async ({ events }) => {
      await start(events, 'ordered');
      const first = events.append(appendOf('ordered', { seq: 1 }, drafts('STEP_STARTED')));
      const second = events.append(
        appendOf('ordered', { seq: 2 }, drafts('STEP_COMPLETED', 'EXECUTION_COMPLETED')),
      );
      expect(await Promise.all([first, second])).toEqual([
        { lastSeq: 1, status: 'running' },
        { lastSeq: 3, status: 'completed' },
      ]);
      expect(await events.getExecution('ordered')).toMatchObject({ sequence: 3, status: 'completed' });
    }));
}

/** Start execution `i` and plan one of four scenarios for it. */
async function arrange(events: EventStore, i: number): Promise<Plan> {
  const id = `batch-${String(i).padStart(2, '0')}`;
  const fence = await events.acquireFence(id);
  await start(events, id, { fence });
  const base = ['EXECUTION_STARTED'];
  switch (i % 4) {
    case 0:
      return {
        id,
        requests: [
          appendOf(id, { seq: 1, fence }, drafts('STEP_STARTED')),
          appendOf(id, { seq: 2, fence }, drafts('STEP_COMPLETED')),
        ],
        outcomes: ['fulfilled', 'fulfilled'],
        log: [...base, 'STEP_STARTED', 'STEP_COMPLETED'],
      };
    case 1: {
      const current = await events.acquireFence(id);
      return {
        id,
        requests: [
          appendOf(id, { seq: 1, fence }, drafts('STEP_STARTED', 'STEP_COMPLETED')),
          appendOf(id, { seq: 1, fence: current }, drafts('EXECUTION_RECOVERED')),
        ],
        outcomes: [StaleFenceError.name, 'fulfilled'],
        log: [...base, 'EXECUTION_RECOVERED'],
      };
    }
    case 2: {
      const [taken] = await events.read('batch-00');
      const reused = { ...draft('STEP_COMPLETED'), envelopeId: taken!.envelopeId };
      return {
        id,
        requests: [
          appendOf(id, { seq: 1, fence }, [draft('STEP_STARTED'), reused]),
          appendOf(id, { seq: 1, fence }, drafts('STEP_FAILED')),
        ],
        outcomes: [DuplicateEnvelopeIdError.name, 'fulfilled'],
        log: [...base, 'STEP_FAILED'],
      };
    }
    default:
      return {
        id,
        requests: [
          appendOf(id, { seq: 1, fence }, drafts('TIMER_SCHEDULED')),
          appendOf(id, { seq: 1, fence }, drafts('SIGNAL_RECEIVED')),
        ],
        outcomes: ['fulfilled', DuplicateSequenceError.name],
        log: [...base, 'TIMER_SCHEDULED'],
      };
  }
}
