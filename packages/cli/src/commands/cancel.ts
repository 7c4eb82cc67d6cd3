/**
 * `skein cancel ID [--reason text] [--json]`: record a cancellation request in the log (no
 * workflow code runs here); a node that runs the workflow ends the execution cancelled.
 */
import type { Stores } from '@skein/workflow-runtime';
import { requestCancel } from '@skein/workflow-runtime/internal';
import { type Io, json } from '../output.js';

/** The reason recorded when `--reason` is not given. */
export const DEFAULT_CANCEL_REASON = 'cancelled with skein cancel';

/** Request the cancellation; exit 1 when the execution had already ended. */
export async function cancelCommand(
  stores: Stores,
  id: string,
  options: { reason?: string; json?: boolean },
  io: Io,
): Promise<number> {
  const result = await requestCancel(stores, id, options.reason ?? DEFAULT_CANCEL_REASON);
  if (options.json === true) io.out(json({ executionId: id, ...result }));
  else if (!result.cancelled)
    io.err(`execution "${id}" is already ${result.status}: nothing to cancel, nothing was written\n`);
  else if (result.alreadyRequested === true)
    io.out(`execution "${id}": a cancellation was already requested; nothing was written\n`);
  else
    io.out(
      `execution "${id}": cancellation recorded (CANCEL_REQUESTED); a node that runs its workflow ends it cancelled\n`,
    );
  return result.cancelled ? 0 : 1;
}
