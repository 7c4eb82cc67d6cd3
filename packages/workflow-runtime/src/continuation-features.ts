/** The `ContinuationFeatures` of a runtime's runs, from what signals and children need of it (adr/0063). */

import { startSuccessorWith } from './continuation-chain.js';
import type { ContinuationFeatures } from './continue-as-new.js';
import type { FeatureDeps } from './signal-child-deps.js';

/** See the module comment. */
export function continuationFeatures(deps: FeatureDeps): ContinuationFeatures {
  return {
    events: deps.stores.events,
    maxPayloadBytes: deps.maxPayloadBytes,
    successorWorkflow: (workflow) => deps.registry.get(workflow),
    startSuccessor: (workflow, successorId, input, from, parentId) =>
      startSuccessorWith(
        deps.stores.events,
        (id) => deps.startSuccessor(workflow, id, input, from, parentId),
        successorId,
        workflow.name,
        from,
      ),
  };
}
