/** The `ContinuationFeatures` of a runtime's runs, from what signals and children need of it (adr/0063). */

import { startSuccessorWith } from './continuation-chain.js';
import type { ContinuationFeatures } from './continue-as-new.js';
import { DEFAULT_LEASE_TTL_MS, executionLeaseKey } from './leases.js';
import type { FeatureDeps } from './signal-child-deps.js';
import type { Stores } from './spi.js';

/** The hand-over's share of `FeatureDeps`: its in-process set and the execution lease it claims. */
export function handOverDeps(
  stores: Stores,
  owner: () => string,
  ttlMs: () => number | undefined,
  clock: () => number,
): Pick<FeatureDeps, 'handingOver' | 'claimLease' | 'releaseLease'> {
  return {
    handingOver: new Set(),
    claimLease: async (id) =>
      (await stores.leases.claim(
        executionLeaseKey(id),
        owner(),
        ttlMs() ?? DEFAULT_LEASE_TTL_MS,
        clock(),
      )) !== null,
    releaseLease: async (id) => {
      await stores.leases.release(executionLeaseKey(id), owner());
    },
  };
}

/** See the module comment. */
export function continuationFeatures(deps: FeatureDeps): ContinuationFeatures {
  return {
    events: deps.stores.events,
    maxPayloadBytes: deps.maxPayloadBytes,
    successorWorkflow: (workflow) => deps.registry.get(workflow),
    reserve: (successorId) => deps.handingOver.add(successorId),
    release: (successorId) => deps.handingOver.delete(successorId),
    startSuccessor: async (workflow, successorId, input, from, parentId, queue) => {
      await startSuccessorWith(
        deps.stores.events,
        (id) => deps.startSuccessor(workflow, id, input, from, parentId, queue),
        successorId,
        workflow.name,
        from,
      );
      // The successor of a queue's execution stays in its queue: its item, after its seq 0 (a
      // crash in between leaves a pending successor whose first claim writes the item back).
      if (queue !== undefined) await deps.queueSuccessor(workflow, successorId, input, queue);
    },
  };
}
