/** How the client reads the worker's answers: results, superseded refusals, errors as data. */
import { ExecutionSupersededError } from '@skein/worker-runtime';
import { StartFencedOutError } from '@skein/workflow-runtime';
import { RemoteProtocolError, RemoteWorkerError } from './errors.js';
import type { RawAnswer } from './transport.js';
import { WireCodes, wireErrorSchema } from './wire.js';

/**
 * The error an error answer stands for. A 409 is `ExecutionSupersededError` only when its
 * `code` is `superseded` and it names the requested execution; a start fenced out becomes
 * `StartFencedOutError` (which a dispatcher retries); anything else is `RemoteWorkerError`.
 */
export function answerError(answer: RawAnswer, executionId: string, origin: string): Error {
  let body: ReturnType<typeof wireErrorSchema.parse>;
  try {
    body = wireErrorSchema.parse(JSON.parse(answer.text));
  } catch (error) {
    return new RemoteProtocolError(executionId, origin, `status ${answer.status} without an error body`, {
      cause: error,
    });
  }
  const remote = new RemoteWorkerError(
    executionId,
    answer.status,
    body.code,
    body.error,
    body.errorId,
    body.issues ?? [],
  );
  if (answer.status === 409 && body.executionId === executionId) {
    if (body.code === WireCodes.Superseded)
      return new ExecutionSupersededError(executionId, { cause: remote });
    if (body.code === WireCodes.StartFencedOut && body.fence !== undefined && body.current !== undefined) {
      return new StartFencedOutError(executionId, body.fence, body.current, { cause: remote });
    }
  }
  return remote;
}
