/**
 * The checks every event store makes before an append, in one order, so that all stores
 * refuse the same request with the same error. Stores call {@link checkAppend} inside the
 * same atomic step as the write (L3: check and write are atomic).
 */
import { assertPayloadSize, DEFAULT_MAX_PAYLOAD_BYTES } from './codec.js';
import {
  DuplicateSequenceError,
  ExecutionAlreadyExistsError,
  ExecutionTerminatedError,
  FenceNotGrantedError,
  InvalidAppendError,
  SequenceGapError,
  StaleFenceError,
} from './errors.js';
import {
  type ExecutionStatus,
  isEventType,
  isTerminalStatus,
  isTerminalType,
  reopensTerminal,
} from './events.js';
import { illFormedReason, isWellFormed } from './ids.js';
import { checkOutboxMessages } from './outbox.js';
import type { AppendRequest } from './spi.js';

export { InvalidAppendError };

/** What a store knows about an execution before an append. */
export interface ExecutionHead {
  /** Newest fence, 0 when none was taken. */
  fence: number;
  /** Last seq written, -1 when the log is empty. */
  lastSeq: number;
  /** Current status, undefined when the log is empty. */
  status: ExecutionStatus | undefined;
  /** Workflow name, when seq 0 exists. */
  workflow: string | undefined;
}

/**
 * Throw the error a store must raise for `request` given the execution's `head`, or return
 * normally when the append may proceed. Order: seq 0 taken, fence (stale, then never
 * granted), terminal, duplicate, gap.
 */
export function checkAppend(
  head: ExecutionHead,
  request: AppendRequest,
  maxPayloadBytes: number = DEFAULT_MAX_PAYLOAD_BYTES,
): void {
  const { executionId, expectedSeq, fence } = request;
  checkShape(request, maxPayloadBytes);
  if (expectedSeq === 0 && head.lastSeq >= 0)
    throw new ExecutionAlreadyExistsError(executionId, head.workflow);
  if (fence < head.fence) throw new StaleFenceError(executionId, fence, head.fence);
  // Only the newest granted fence writes: a fence above it was never handed out (L3).
  if (fence > head.fence) throw new FenceNotGrantedError(executionId, fence, head.fence);
  if (
    head.status !== undefined &&
    isTerminalStatus(head.status) &&
    !reopensTerminal(head.status, request.events[0]?.type)
  ) {
    throw new ExecutionTerminatedError(executionId, head.status);
  }
  if (expectedSeq <= head.lastSeq) throw new DuplicateSequenceError(executionId, expectedSeq);
  if (expectedSeq > head.lastSeq + 1) throw new SequenceGapError(executionId, expectedSeq, head.lastSeq + 1);
}

function checkShape(request: AppendRequest, maxPayloadBytes: number): void {
  const { executionId, expectedSeq, fence, events } = request;
  if (request.outbox !== undefined && request.outbox.length > 0) checkOutbox(request);
  if (typeof executionId !== 'string' || executionId.length === 0) {
    throw new InvalidAppendError(String(executionId), 'executionId must be a non-empty string');
  }
  if (!isWellFormed(executionId)) {
    throw new InvalidAppendError(executionId, `executionId ${illFormedReason(executionId)}`);
  }
  if (expectedSeq === 0 && !isWellFormed(String(request.workflow))) {
    throw new InvalidAppendError(executionId, `workflow ${illFormedReason(String(request.workflow))}`);
  }
  if (!Number.isSafeInteger(expectedSeq) || expectedSeq < 0) {
    throw new InvalidAppendError(executionId, `expectedSeq ${expectedSeq} is not a non-negative integer`);
  }
  if (!Number.isSafeInteger(fence) || fence < 0) {
    throw new InvalidAppendError(executionId, `fence ${fence} is not a non-negative integer`);
  }
  if (events.length === 0) throw new InvalidAppendError(executionId, 'no events');
  for (let i = 0; i < events.length; i++) {
    const event = events[i]!;
    const seq = expectedSeq + i;
    if (!isEventType(event.type))
      throw new InvalidAppendError(executionId, `unknown event type "${event.type}"`);
    if ((seq === 0) !== (event.type === 'EXECUTION_STARTED')) {
      throw new InvalidAppendError(
        executionId,
        `seq ${seq} cannot be ${event.type} (L2: seq 0, and only seq 0, is EXECUTION_STARTED)`,
      );
    }
    if (event.type === 'EXECUTION_REDRIVEN' && i !== 0) {
      throw new InvalidAppendError(
        executionId,
        `EXECUTION_REDRIVEN at seq ${seq} must be the first event of its append`,
      );
    }
    if (isTerminalType(event.type) && i !== events.length - 1) {
      throw new InvalidAppendError(executionId, `${event.type} at seq ${seq} must be the last event (L6)`);
    }
    // The fast test of assertPayloadSize first, so the message is built only when it may be needed.
    if (!(event.payload.length * 3 <= maxPayloadBytes)) {
      assertPayloadSize(
        executionId,
        `payload of ${event.type} at seq ${seq}`,
        event.payload,
        maxPayloadBytes,
      );
    }
  }
}

/** The outbox messages of an append are well-formed and distinct (L7), or the append is refused. */
function checkOutbox(request: AppendRequest): void {
  try {
    checkOutboxMessages(request.outbox!, 'outbox');
  } catch (error) {
    throw new InvalidAppendError(String(request.executionId), (error as Error).message);
  }
}
