/**
 * The hub's routes (docs/executors.md#protocol), once a request is authenticated: open a
 * session, heartbeat, the long poll, result reports and inspection answers. A request of a
 * session that cannot act is answered 409 with why (`session_unknown`, `_revoked`,
 * `_expired`, `_replaced`); a report the hub would only refuse again 409 `not_your_run` or
 * `unknown_run`; an invalid body 400 listing the fields.
 */
import type { Runtime } from '@skein/workflow-runtime';
import { encode } from '@skein/workflow-runtime/internal';
import { type Answer, failureAnswer } from '../failure-answer.js';
import type { WorkerLogger } from '../options.js';
import { invalid, parseBody } from '../routes.js';
import type { Reply, Routes } from '../signed-server.js';
import { WireCodes } from '../wire.js';
import { readBinding, settle } from './central-record.js';
import {
  ExecutorPaths,
  heartbeatSchema,
  type InspectionAnswer,
  inspectionReplySchema,
  openSessionSchema,
  pollSchema,
  type Report,
  reportSchema,
} from './executor-wire.js';
import type { HubSession, SessionEnded, Sessions } from './sessions.js';

/** What the routes act on. */
export interface HubDeps {
  runtime: Runtime;
  sessions: Sessions;
  logger: WorkerLogger & { info(message: string, details: Record<string, unknown>): void };
  heartbeatMs: number;
  ttlMs: number;
  /** A result of (execution, fence) was written or found written: wake whoever waits for it. */
  settled(executionId: string, fence: number): void;
  /** An executor answered inspection `requestId`; false when nobody waits for it any more. */
  answered(executorId: string, requestId: string, answer: InspectionAnswer): boolean;
}

type HubRoute = keyof typeof ExecutorPaths | 'unknown';

const byPath = new Map<string, HubRoute>(
  Object.entries(ExecutorPaths).map(([route, path]) => [path, route as HubRoute]),
);

/** The hub's routes for the signed pipeline. */
export function hubRoutes(deps: HubDeps): Routes<HubRoute> {
  return {
    routeOf: (path) => {
      const route = byPath.get(path) ?? 'unknown';
      return { route, method: route === 'unknown' ? null : 'POST' };
    },
    takesBody: (route) => route !== 'unknown',
    serve: (route, body) => serveHub(route, body, deps),
  };
}

async function serveHub(route: HubRoute, body: Buffer, deps: HubDeps): Promise<Reply> {
  switch (route) {
    case 'sessions':
      return openSession(body, deps);
    case 'heartbeat':
      return heartbeat(body, deps);
    case 'close':
      return closeSession(body, deps);
    case 'poll':
      return poll(body, deps);
    case 'results':
      return report(body, deps);
    case 'inspections':
      return inspectionReply(body, deps);
    default:
      return { status: 404, body: { error: 'no such route', code: WireCodes.NotFound } };
  }
}

function openSession(body: Buffer, deps: HubDeps): Reply {
  const parsed = parseBody(body, openSessionSchema);
  if ('status' in parsed) return parsed;
  const session = deps.sessions.open(parsed.value.executorId, parsed.value.packageVersion);
  deps.logger.info('executor session opened', {
    executorId: session.executorId,
    packageVersion: session.packageVersion,
    ...session.binding,
  });
  const answer = { ...session.binding, heartbeatMs: deps.heartbeatMs, ttlMs: deps.ttlMs };
  return { status: 200, text: JSON.stringify(answer) };
}

function heartbeat(body: Buffer, deps: HubDeps): Reply {
  const parsed = parseBody(body, heartbeatSchema);
  if ('status' in parsed) return parsed;
  const session = deps.sessions.heartbeat(parsed.value.executorId, parsed.value.session);
  if (typeof session === 'string') return ended(session);
  return { status: 200, text: JSON.stringify({ ok: true, expiresAt: session.expiresAt }) };
}

function closeSession(body: Buffer, deps: HubDeps): Reply {
  const parsed = parseBody(body, heartbeatSchema);
  if ('status' in parsed) return parsed;
  const session = deps.sessions.check(parsed.value.executorId, parsed.value.session);
  if (typeof session === 'string') return ended(session);
  deps.sessions.close(session);
  return { status: 200, text: JSON.stringify({ ok: true }) };
}

async function poll(body: Buffer, deps: HubDeps): Promise<Reply> {
  const parsed = parseBody(body, pollSchema);
  if ('status' in parsed) return parsed;
  const session = deps.sessions.check(parsed.value.executorId, parsed.value.session);
  if (typeof session === 'string') return ended(session);
  const items = await deps.sessions.take(session, parsed.value.waitMs);
  return { status: 200, text: encode({ items }) };
}

async function report(body: Buffer, deps: HubDeps): Promise<Reply> {
  const parsed = parseBody(body, reportSchema);
  if ('status' in parsed) return parsed;
  const reply = await judge(parsed.value, deps);
  const { executionId, fence, binding, session, executorId } = parsed.value;
  const outcome =
    'text' in reply
      ? (JSON.parse(reply.text) as { duplicate: boolean }).duplicate
        ? 'duplicate'
        : 'settled'
      : reply.body.code;
  deps.logger.info('result reported', {
    executorId,
    executionId,
    fence,
    binding,
    reporter: session,
    outcome,
  });
  return reply;
}

async function judge(reported: Report, deps: HubDeps): Promise<Reply> {
  const session = deps.sessions.check(reported.executorId, reported.session);
  if (typeof session === 'string') return ended(session);
  try {
    const refusal = await bindingRefusal(reported, session, deps);
    if (refusal !== null) return refusal;
    const outcome = await settle(
      deps.runtime,
      reported.executionId,
      reported.fence,
      reported.outcome,
      reported.result,
    );
    if (outcome === 'not-yours')
      return notYours(reported, 'the execution was ended or taken over by another writer');
    deps.settled(reported.executionId, reported.fence);
    return { status: 200, text: JSON.stringify({ acknowledged: true, duplicate: outcome === 'duplicate' }) };
  } catch (error) {
    // A result the central log cannot hold is refused as invalid: sending it again cannot help.
    const name = error instanceof Error ? error.name : '';
    if (['PayloadTooLargeError', 'SerializationError', 'SyntaxError'].includes(name)) {
      return invalid([{ path: 'body.result', message: (error as Error).message }]);
    }
    return failureAnswer(error, reported.executionId, deps.logger, 'report');
  }
}

/** The refusal of a report whose binding is not the one the hub handed the run out under. */
async function bindingRefusal(reported: Report, session: HubSession, deps: HubDeps): Promise<Answer | null> {
  const record = await readBinding(deps.runtime, reported.executionId);
  if (record === null) {
    const body = { error: 'no run of this execution was handed out', code: WireCodes.UnknownRun };
    return { status: 409, body: { ...body, executionId: reported.executionId } };
  }
  const matches =
    record.executorId === session.executorId &&
    record.incarnation === reported.binding.incarnation &&
    record.sessionId === reported.binding.sessionId &&
    record.fence === reported.fence &&
    record.transactionId === reported.transactionId;
  return matches ? null : notYours(reported, 'the run was handed out under another binding');
}

function notYours(reported: Report, why: string): Answer {
  return {
    status: 409,
    body: {
      error: why,
      code: WireCodes.NotYourRun,
      executionId: reported.executionId,
      fence: reported.fence,
    },
  };
}

function inspectionReply(body: Buffer, deps: HubDeps): Reply {
  const parsed = parseBody(body, inspectionReplySchema);
  if ('status' in parsed) return parsed;
  const session = deps.sessions.check(parsed.value.executorId, parsed.value.session);
  if (typeof session === 'string') return ended(session);
  const waited = deps.answered(parsed.value.executorId, parsed.value.requestId, parsed.value.answer);
  return { status: 200, text: JSON.stringify({ ok: true, waited }) };
}

const endedMessages: Record<SessionEnded, string> = {
  session_unknown: 'no such session at this hub',
  session_revoked: 'the session was revoked',
  session_expired: 'the session expired',
  session_replaced: 'the session was replaced by a newer one',
  session_closed: 'the executor closed the session',
};

function ended(why: SessionEnded): Answer {
  return { status: 409, body: { error: endedMessages[why], code: why } };
}
