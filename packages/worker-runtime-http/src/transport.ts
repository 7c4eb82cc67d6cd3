/** The client's signed requests, over the global `fetch`. */
import { RemoteTimeoutError, RemoteUnreachableError } from './errors.js';
import { signRequest } from './signing.js';
import { TRACEPARENT_HEADER } from './trace-context.js';

/** Where and how a client sends. */
export interface Endpoint {
  base: URL;
  secret: Uint8Array;
  timeoutMs: number;
  clock: () => number;
}

/** One request; `executionId` names the execution in errors. */
export interface SignedRequest {
  method: 'GET' | 'POST';
  /** Relative to the base URL, e.g. `v1/executions`. */
  path: string;
  /** Encoded JSON body of a POST. */
  body?: string;
  executionId: string;
  /** Give up early when aborted (reported as unreachable). */
  signal?: AbortSignal;
  /** The caller's W3C `traceparent`, sent as the `traceparent` header (default: none). */
  traceparent?: string;
}

/** The answer's status and text. */
export interface RawAnswer {
  status: number;
  text: string;
}

/** Send a signed request; reject with `RemoteTimeoutError` or `RemoteUnreachableError`. */
export async function send(endpoint: Endpoint, request: SignedRequest): Promise<RawAnswer> {
  const url = new URL(request.path, endpoint.base);
  const body = Buffer.from(request.body ?? '', 'utf8');
  const target = `${url.pathname}${url.search}`;
  const headers: Record<string, string> = {
    ...signRequest(endpoint.secret, { method: request.method, path: target, body }, endpoint.clock()),
    accept: 'application/json',
  };
  if (request.method === 'POST') headers['content-type'] = 'application/json';
  if (request.traceparent !== undefined) headers[TRACEPARENT_HEADER] = request.traceparent;
  const timeout = AbortSignal.timeout(endpoint.timeoutMs);
  const signal = request.signal === undefined ? timeout : AbortSignal.any([timeout, request.signal]);
  try {
    const response = await fetch(url, {
      method: request.method,
      headers,
      ...(request.method === 'POST' ? { body } : {}),
      signal,
    });
    return { status: response.status, text: await response.text() };
  } catch (error) {
    if (timeout.aborted) throw new RemoteTimeoutError(request.executionId, url.origin, endpoint.timeoutMs);
    throw new RemoteUnreachableError(request.executionId, url.origin, { cause: error });
  }
}
