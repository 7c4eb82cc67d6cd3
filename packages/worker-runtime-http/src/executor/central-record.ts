/**
 * What the hub writes to the central stores for a run on an executor (docs/executors.md):
 * seq 0 under the attempt's fence before the run is handed out, the binding the run was
 * handed out under (a record in the `LeaseStore`, so a restarted hub still knows it), and the
 * terminal event under the same fence when the result is reported. The store's fence check
 * makes a report of a run that was taken over since a refusal, atomically.
 */
import {
  DEFAULT_MAX_PAYLOAD_BYTES,
  isTerminalStatus,
  type Runtime,
  type StartedPayload,
} from '@skein/workflow-runtime';
import { assertPayloadSize, decode, encode, newId } from '@skein/workflow-runtime/internal';
import { ExecutorRunRefusedError } from '../errors.js';
import type { Binding } from './retained-store.js';

/** The binding a run was handed out under, as the hub keeps it. */
export interface BindingRecord extends Binding {
  executorId: string;
  fence: number;
  transactionId: string;
}

/** What writing seq 0 found: the execution is ready to hand out, or already terminal. */
export type StartOutcome = 'ready' | 'terminal';

/** What settling a reported result did. */
export type SettleOutcome = 'settled' | 'duplicate' | 'not-yours';

const bindingKey = (executionId: string) => `executor-run:${executionId}`;

/** How long a binding record is kept after the run is handed out (default: 7 days). */
export const DEFAULT_BINDING_TTL_MS = 7 * 24 * 60 * 60 * 1000;

/** Keep `record` as the binding of its execution, replacing an older one. */
export async function recordBinding(
  runtime: Runtime,
  executionId: string,
  record: BindingRecord,
  ttlMs: number,
  now: number,
): Promise<void> {
  const { leases } = runtime.stores;
  const key = bindingKey(executionId);
  const owner = JSON.stringify(record);
  for (let attempt = 0; attempt < 3; attempt++) {
    const existing = await leases.get(key);
    if (existing !== null && existing.owner !== owner) await leases.release(key, existing.owner);
    if ((await leases.claim(key, owner, ttlMs, now)) !== null) return;
  }
  throw new Error(`the binding record of "${executionId}" kept changing under the hub`);
}

/** The binding the execution was last handed out under, or null. */
export async function readBinding(runtime: Runtime, executionId: string): Promise<BindingRecord | null> {
  const lease = await runtime.stores.leases.get(bindingKey(executionId));
  if (lease === null) return null;
  try {
    return JSON.parse(lease.owner) as BindingRecord;
  } catch {
    // Not a record this hub wrote (the key is taken by something else): no binding.
    return null;
  }
}

/** The package the hub hands out, as written to seq 0. */
export interface HandedPackage {
  executionId: string;
  workflow: string;
  version?: number | undefined;
  input?: unknown;
}

/**
 * Write seq 0 under `fence` when the execution has no events; an execution that has only seq
 * 0 (enqueued) is ready too. One with progress of its own in the central log is refused.
 */
export async function ensureStarted(
  runtime: Runtime,
  pkg: HandedPackage,
  fence: number,
): Promise<StartOutcome> {
  const { events } = runtime.stores;
  for (let attempt = 0; attempt < 3; attempt++) {
    const summary = await events.getExecution(pkg.executionId);
    if (summary !== null) {
      if (isTerminalStatus(summary.status)) return 'terminal';
      if (summary.workflow !== pkg.workflow)
        throw new ExecutorRunRefusedError(pkg.executionId, `it is an execution of "${summary.workflow}"`);
      if (summary.sequence === 0) return 'ready';
      throw new ExecutorRunRefusedError(pkg.executionId, 'it has progress in the central log');
    }
    const definition = runtime.workflow(pkg.workflow, pkg.version);
    const payload: StartedPayload = {
      workflow: definition.name,
      version: definition.version,
      input: pkg.input,
    };
    try {
      await events.append({
        executionId: pkg.executionId,
        workflow: definition.name,
        expectedSeq: 0,
        fence,
        events: [
          {
            envelopeId: newId(),
            type: 'EXECUTION_STARTED',
            payload: encode(payload),
            recordedAt: Date.now(),
          },
        ],
      });
      return 'ready';
    } catch (error) {
      // Another writer took seq 0 first: read again and decide on what it wrote.
      if (!(error instanceof Error) || error.name !== 'DuplicateSequenceError') throw error;
    }
  }
  throw new Error(`seq 0 of "${pkg.executionId}" kept changing under the hub`);
}

/**
 * Append the reported terminal event under the fence the run was handed out with.
 * `duplicate`: the log already ends with it under that fence; `not-yours`: another writer
 * ended or took over the execution since.
 */
export async function settle(
  runtime: Runtime,
  executionId: string,
  fence: number,
  outcome: 'completed' | 'failed',
  resultText: string,
): Promise<SettleOutcome> {
  const { events } = runtime.stores;
  const value = decode(resultText);
  const payload = encode(outcome === 'completed' ? { output: value } : { error: value });
  assertPayloadSize(executionId, 'reported result', payload, DEFAULT_MAX_PAYLOAD_BYTES);
  const type = outcome === 'completed' ? 'EXECUTION_COMPLETED' : 'EXECUTION_FAILED';
  for (let attempt = 0; attempt < 3; attempt++) {
    const summary = await events.getExecution(executionId);
    if (summary === null) return 'not-yours';
    if (isTerminalStatus(summary.status)) {
      const [last] = await events.read(executionId, summary.sequence, 1);
      return last?.fence === fence && last.type === type ? 'duplicate' : 'not-yours';
    }
    try {
      await events.append({
        executionId,
        workflow: summary.workflow,
        expectedSeq: summary.sequence + 1,
        fence,
        events: [{ envelopeId: newId(), type, payload, recordedAt: Date.now() }],
      });
      return 'settled';
    } catch (error) {
      const name = error instanceof Error ? error.name : '';
      if (name === 'StaleFenceError') return 'not-yours';
      if (name !== 'DuplicateSequenceError') throw error;
    }
  }
  return 'not-yours';
}
