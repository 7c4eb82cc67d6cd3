/** The reads an append makes after a refusal, to say why it was refused. */
import type { Query } from '../database.js';

/** The workflow of an execution's seq 0, read after a racing start lost on the primary key. */
export function workflowQuery(executionId: string): Query {
  return {
    name: 'skein_select_workflow',
    text: 'SELECT workflow FROM skein_executions WHERE execution_id = $1',
    values: [executionId],
  };
}

/** Which of `envelopeIds` are in the log, read after a unique violation on envelope_id. */
export function takenEnvelopeIdsQuery(envelopeIds: readonly string[]): Query {
  return {
    name: 'skein_select_taken_envelope_ids',
    text: 'SELECT envelope_id AS "envelopeId" FROM skein_events WHERE envelope_id = ANY ($1::text[])',
    values: [[...envelopeIds]],
  };
}
