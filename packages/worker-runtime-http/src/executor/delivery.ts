/**
 * Delivering one retained result (E2, E3): at most 3 attempts within the cleanup budget,
 * each with the identical body under the binding that accepted the run; stop at once when the
 * delivering session can no longer act; a refusal the hub would only repeat ends delivery and
 * is recorded with its cause; an acknowledgement releases the row. One deliverer per result:
 * a result being delivered is claimed, and nobody else delivers it meanwhile.
 */
import { encode } from '@skein/workflow-runtime/internal';
import type { HubClient } from './hub-client.js';
import type { ExecutorLogger } from './logger.js';
import { type Binding, type RetainedRow, type RetainedStore, runKey } from './retained-store.js';

/** Attempts of one delivery. */
export const MAX_DELIVERY_ATTEMPTS = 3;

/** The session a delivery goes through. */
export interface DeliveringSession {
  executorId: string;
  binding: Binding;
  /** False once the session is revoked, expired or replaced (or the executor stops). */
  readonly live: boolean;
  /** The hub answered that the session cannot act: end it. */
  lost(code: string): void;
}

/** What a delivery needs. */
export interface DeliveryDeps {
  store: RetainedStore;
  client: HubClient;
  /** Results being delivered now, by `runKey`. */
  claims: Set<string>;
  cleanupBudgetMs: number;
  logger: ExecutorLogger;
}

/** How a delivery ended. */
export type Delivered = 'acknowledged' | 'refused' | 'stopped' | 'retained' | 'busy';

/** The report of `row`, encoded once: every attempt sends exactly this. */
export function reportBody(session: DeliveringSession, row: RetainedRow): string {
  if (row.chosen === null || row.binding === null)
    throw new Error(`run "${row.executionId}" has nothing to report`);
  return encode({
    executorId: session.executorId,
    session: session.binding,
    executionId: row.executionId,
    fence: row.fence,
    binding: row.binding,
    transactionId: row.transactionId,
    outcome: row.chosen.outcome,
    result: row.chosen.result,
    exitCode: row.chosen.exitCode,
    exitMessage: row.chosen.exitMessage,
    chosenAt: row.chosen.chosenAt,
  });
}

/** Deliver `row` through `session`. */
export async function deliver(
  deps: DeliveryDeps,
  row: RetainedRow,
  session: DeliveringSession,
): Promise<Delivered> {
  const key = runKey(row.executionId, row.fence);
  if (deps.claims.has(key)) return 'busy';
  deps.claims.add(key);
  try {
    return await attempts(deps, row, session, reportBody(session, row));
  } finally {
    deps.claims.delete(key);
  }
}

async function attempts(
  deps: DeliveryDeps,
  row: RetainedRow,
  session: DeliveringSession,
  body: string,
): Promise<Delivered> {
  const deadline = Date.now() + deps.cleanupBudgetMs;
  for (let attempt = 1; attempt <= MAX_DELIVERY_ATTEMPTS; attempt++) {
    if (!session.live || !deps.store.open) return 'stopped';
    const answer = await deps.client.report(body);
    if (!deps.store.open) return 'stopped';
    switch (answer.kind) {
      case 'acknowledged':
        deps.store.recordAttempt(
          row.executionId,
          row.fence,
          answer.duplicate ? 'acknowledged (duplicate)' : null,
        );
        deps.store.release(row.executionId, row.fence);
        return 'acknowledged';
      case 'session-ended':
        deps.store.recordAttempt(row.executionId, row.fence, `session ended: ${answer.code}`);
        session.lost(answer.code);
        return 'stopped';
      case 'refused':
        deps.store.recordAttempt(row.executionId, row.fence, null);
        deps.store.refuse(row.executionId, row.fence, answer.code, answer.message);
        deps.logger.warn('the hub refused a result; delivery ended', {
          executionId: row.executionId,
          fence: row.fence,
          cause: answer.code,
          message: answer.message,
        });
        return 'refused';
      case 'failed':
        deps.store.recordAttempt(row.executionId, row.fence, answer.diagnostic);
    }
    const pause = Math.min(100 * 2 ** attempt, deadline - Date.now());
    if (attempt === MAX_DELIVERY_ATTEMPTS || pause <= 0) break;
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
  return 'retained';
}
