/**
 * `skein signal ID NAME JSON [--id signalId] [--json]`: put a signal in the execution's inbox
 * (no workflow code runs here, so the payload is checked against the declared schema only by
 * the wait that consumes it); an execution suspended waiting for it is handed to the nodes
 * that run its workflow.
 */
import type { Stores } from '@skein/workflow-runtime';
import { deliverSignal } from '@skein/workflow-runtime/internal';
import { UsageError } from '../errors.js';
import { type Io, json } from '../output.js';

/** Send the signal; the payload argument must be JSON. */
export async function signalCommand(
  stores: Stores,
  id: string,
  name: string,
  payloadText: string,
  options: { id?: string; json?: boolean },
  io: Io,
): Promise<number> {
  const payload = parseJson(payloadText);
  const result = await deliverSignal(
    stores,
    id,
    name,
    payload,
    options.id === undefined ? {} : { signalId: options.id },
  );
  if (options.json === true) {
    io.out(json({ executionId: id, name, ...result }));
    return 0;
  }
  if (!result.accepted) {
    io.out(`signal ${result.signalId} was already consumed by execution "${id}"; nothing was written\n`);
    return 0;
  }
  const where = result.handedOver
    ? 'it was waiting for it and is handed to a node that runs its workflow'
    : result.waitingFor.length === 0
      ? 'it waits for no signal now; the signal stays in its inbox until a wait takes it'
      : `it waits for ${result.waitingFor.join(', ')} now; the signal stays in its inbox until a wait takes it`;
  io.out(`signal "${name}" (${result.signalId}) sent to execution "${id}": ${where}\n`);
  return 0;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new UsageError(
      `the signal payload ${JSON.stringify(text)} is not JSON (${reason}); quote it for the shell, e.g. '{"ok":true}' or 'true'`,
      { cause: error },
    );
  }
}
