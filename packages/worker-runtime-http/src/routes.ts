/**
 * The worker's routes, once a request is authenticated and its body read: which route a
 * request target names, and what each one answers.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Runtime } from '@skein/workflow-runtime';
import { decode, encode } from '@skein/workflow-runtime/internal';
import type { z } from 'zod';
import { wireExecutionId } from './execution-id.js';
import { type Answer, failureAnswer } from './failure-answer.js';
import type { InFlightRuns } from './in-flight.js';
import type { WorkerLogger } from './options.js';
import type { Reply } from './signed-server.js';
import { TRACEPARENT_HEADER, wellFormedTraceparent } from './trace-context.js';
import { executeRequestSchema, leaseRequestSchema, Paths, WireCodes } from './wire.js';

/** A route a request target names. */
export type Route =
  | { kind: 'health' }
  | { kind: 'lease' }
  | { kind: 'execute' }
  | { kind: 'state'; rawId: string }
  | { kind: 'unknown' };

/** An answer with a body already encoded (the codec's JSON). */
export type { Reply } from './signed-server.js';

/** What the routes act on. */
export interface RouteDeps {
  runtime: Runtime;
  runs: InFlightRuns;
  logger: WorkerLogger;
  /** Told the caller's `traceparent` before a run; what it returns is called when the run ends. */
  onTraceparent?: ((executionId: string, traceparent: string) => (() => void) | undefined) | undefined;
}

const EXECUTION_PREFIX = `${Paths.executions}/`;

/** The route of a path (query excluded), and the method it takes. */
export function routeOf(path: string): { route: Route; method: 'GET' | 'POST' | null } {
  if (path === Paths.health) return { route: { kind: 'health' }, method: 'GET' };
  if (path === Paths.leases) return { route: { kind: 'lease' }, method: 'POST' };
  if (path === Paths.executions) return { route: { kind: 'execute' }, method: 'POST' };
  if (path.startsWith(EXECUTION_PREFIX)) {
    return { route: { kind: 'state', rawId: path.slice(EXECUTION_PREFIX.length) }, method: 'GET' };
  }
  return { route: { kind: 'unknown' }, method: null };
}

/** True when a method's requests carry a JSON body. */
export function takesBody(route: Route): boolean {
  return route.kind === 'lease' || route.kind === 'execute';
}

/** Serve an authenticated request. Never throws: every failure becomes an answer. */
export async function serve(
  route: Route,
  body: Buffer,
  deps: RouteDeps,
  headers: IncomingHttpHeaders = {},
): Promise<Reply> {
  switch (route.kind) {
    case 'health':
      return { status: 200, text: JSON.stringify({ ok: true, nodeId: deps.runtime.nodeId }) };
    case 'lease':
      return lease(body, deps);
    case 'execute':
      return execute(body, deps, wellFormedTraceparent(headers[TRACEPARENT_HEADER]));
    case 'state':
      return state(route.rawId, deps);
    default:
      return { status: 404, body: { error: 'no such route', code: WireCodes.NotFound } };
  }
}

async function lease(body: Buffer, deps: RouteDeps): Promise<Reply> {
  const parsed = parseBody(body, leaseRequestSchema);
  if ('status' in parsed) return parsed;
  try {
    const granted = await deps.runs.allocate(parsed.value);
    return { status: 200, text: JSON.stringify(granted) };
  } catch (error) {
    return failureAnswer(error, parsed.value.executionId, deps.logger, 'allocate');
  }
}

async function execute(body: Buffer, deps: RouteDeps, traceparent: string | undefined): Promise<Reply> {
  const parsed = parseBody(body, executeRequestSchema);
  if ('status' in parsed) return parsed;
  const { fence, ...pkg } = parsed.value;
  const lease = {
    executionId: pkg.executionId,
    fence,
    workerId: deps.runtime.nodeId,
    allocatedAt: Date.now(),
  };
  const adopted = adopt(deps, pkg.executionId, traceparent);
  try {
    return { status: 200, text: encode(await deps.runs.execute(lease, pkg)) };
  } catch (error) {
    return failureAnswer(error, pkg.executionId, deps.logger, 'execute');
  } finally {
    adopted?.();
  }
}

/** Hand the run's caller context to the hook; a hook that throws is logged, and the run goes on. */
function adopt(
  deps: RouteDeps,
  executionId: string,
  traceparent: string | undefined,
): (() => void) | undefined {
  if (traceparent === undefined || deps.onTraceparent === undefined) return undefined;
  try {
    return deps.onTraceparent(executionId, traceparent) ?? undefined;
  } catch (error) {
    deps.logger.warn('onTraceparent threw; the run goes on without the caller context', {
      executionId,
      error: error instanceof Error ? error.message : String(error),
    });
    return undefined;
  }
}

async function state(rawId: string, deps: RouteDeps): Promise<Reply> {
  const id = decodeSegment(rawId);
  const checked = id === null ? null : wireExecutionId.safeParse(id);
  if (checked === null || !checked.success) {
    const message = checked?.error.issues[0]?.message ?? 'is not a valid percent-encoded path segment';
    return invalid([{ path: 'executionId', message }]);
  }
  try {
    const found = await deps.runtime.loadState(checked.data);
    if (found === null) {
      return {
        status: 404,
        body: { error: 'no such execution', code: WireCodes.NotFound, executionId: checked.data },
      };
    }
    return { status: 200, text: encode(found) };
  } catch (error) {
    return failureAnswer(error, checked.data, deps.logger, 'load state');
  }
}

/** The body decoded (codec JSON) and checked against `schema`, or a 400 listing the fields. */
export function parseBody<T>(body: Buffer, schema: z.ZodType<T>): { value: T } | Answer {
  let value: unknown;
  try {
    value = decode(body.toString('utf8'));
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return invalid([{ path: 'body', message: `is not valid JSON: ${message}` }]);
  }
  const result = schema.safeParse(value);
  if (result.success) return { value: result.data };
  return invalid(
    result.error.issues.map((issue) => ({
      path: ['body', ...issue.path.map(String)].join('.'),
      message: issue.message,
    })),
  );
}

export function invalid(issues: { path: string; message: string }[]): Answer {
  return { status: 400, body: { error: 'invalid request', code: WireCodes.InvalidRequest, issues } };
}

function decodeSegment(raw: string): string | null {
  try {
    return decodeURIComponent(raw);
  } catch {
    // A malformed escape (`%zz`) is not an id; the caller answers 400.
    return null;
  }
}
