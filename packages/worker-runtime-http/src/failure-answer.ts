/**
 * How a failure of the runtime becomes an answer: superseded refusals 409, a start fenced out
 * or a fence never granted 409 with the fences, refused input 400 with its fields, anything else 500 with an error id
 * (the full error is logged under that id; the answer carries no message and no stack).
 */
import { randomUUID } from 'node:crypto';
import { isSupersededRefusal } from '@skein/worker-runtime';
import type { WorkerLogger } from './options.js';
import { WireCodes, type WireError } from './wire.js';

/** An answer to send. */
export interface Answer {
  status: number;
  body: WireError;
}

const nameOf = (error: unknown): string => (error instanceof Error ? error.name : '');

/** The answer to `error`, raised while serving `executionId` (the id decides superseded-ness). */
export function failureAnswer(
  error: unknown,
  executionId: string,
  logger: WorkerLogger,
  context: string,
): Answer {
  if (isSupersededRefusal(error, executionId)) {
    return { status: 409, body: { error: 'execution superseded', code: WireCodes.Superseded, executionId } };
  }
  const name = nameOf(error);
  if (name === 'StartFencedOutError' || name === 'FenceNotGrantedError') {
    const { fence, current } = error as { fence: number; current: number };
    const [message, code] =
      name === 'StartFencedOutError'
        ? ['start fenced out; retry the start', WireCodes.StartFencedOut]
        : ['fence was never granted; take a lease first', WireCodes.FenceNotGranted];
    return { status: 409, body: { error: message, code, executionId, fence, current } };
  }
  if (name === 'InvalidInputError') {
    const { issues } = error as unknown as { issues: { path: string; message: string }[] };
    const body = { error: 'invalid request', code: WireCodes.InvalidRequest, executionId, issues };
    return { status: 400, body };
  }
  if (name === 'UnknownWorkflowError') {
    const body = { error: (error as Error).message, code: WireCodes.UnknownWorkflow, executionId };
    return { status: 400, body };
  }
  const errorId = randomUUID();
  logger.error(`${context} failed`, { errorId, executionId, error });
  return { status: 500, body: { error: 'internal error', code: WireCodes.Internal, errorId, executionId } };
}
