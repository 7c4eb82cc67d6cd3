/**
 * `skein resume ID [--reason text] [--json]`: record an operator's resume of a failed or
 * dead-lettered execution (`EXECUTION_REDRIVEN`, adr/0067; no workflow code runs here); a node
 * that runs its workflow takes it over once its lease lapses and re-drives it from its log.
 */
import type { Stores } from '@skein/workflow-runtime';
import { requestResume } from '@skein/workflow-runtime/internal';
import { type Io, json } from '../output.js';

/** The reason recorded when `--reason` is not given. */
export const DEFAULT_RESUME_REASON = 'resumed with skein resume';

/** Record the resume; an execution that is not failed or dead-lettered is refused (exit 1, nothing written). */
export async function resumeCommand(
  stores: Stores,
  id: string,
  options: { reason?: string; json?: boolean },
  io: Io,
): Promise<number> {
  const { seq: _seq, ...result } = await requestResume(stores, id, {
    reason: options.reason ?? DEFAULT_RESUME_REASON,
  });
  if (options.json === true) io.out(json(result));
  else {
    const steps = result.reopened.map((step) => `"${step.name}"`).join(', ');
    io.out(
      `execution "${id}": resume recorded (EXECUTION_REDRIVEN, from ${result.from}); ` +
        `${steps === '' ? 'no failed step is reopened' : `runs again: ${steps}`}; ` +
        'a node that runs its workflow re-drives it\n',
    );
  }
  return 0;
}
