/**
 * How the worker's HTTP server bounds connections and slow requests, so that no one who merely
 * reaches the port can hold its memory or file descriptors: at most `maxConnections` at once
 * (more are closed as they are accepted); the first request's headers must arrive within
 * min(`requestTimeoutMs`, 10 s) of the connection, which also bounds a connection that sends
 * nothing, and a whole request within `requestTimeoutMs` (else 408 and the connection
 * destroyed); a connection idle after an answer is closed after Node's `keepAliveTimeout`
 * (5 s). Node checks both deadlines on a timer (every 30 s by default, so a request could
 * live up to 30 s past its bound): here every tenth of the headers bound, at most every second,
 * and each deadline is set one check interval early, so a request is cut at its bound at the
 * latest. Node-only.
 */
import type { Server, ServerOptions } from 'node:http';
import type { ResolvedLimits, WorkerLogger } from './options.js';

/** Headers take at most this long, or `requestTimeoutMs` when that is shorter. */
const MAX_HEADERS_MS = 10_000;
/** Refused connections are reported at most this often. */
const DROP_REPORT_MS = 10_000;

/** The deadlines the server enforces, derived from the limits. */
export interface Deadlines {
  /** How often Node checks the deadlines of requests in progress. */
  checkEveryMs: number;
  /** Node's `requestTimeout`: the bound less one check interval. */
  requestTimeout: number;
  /** Node's `headersTimeout`: the headers bound less one check interval. */
  headersTimeout: number;
}

/** The deadlines for `requestTimeoutMs`. */
export function deadlines(requestTimeoutMs: number): Deadlines {
  const headersMs = Math.min(requestTimeoutMs, MAX_HEADERS_MS);
  const checkEveryMs = Math.max(1, Math.min(1_000, Math.floor(headersMs / 10)));
  return {
    checkEveryMs,
    requestTimeout: Math.max(1, requestTimeoutMs - checkEveryMs),
    headersTimeout: Math.max(1, headersMs - checkEveryMs),
  };
}

/** The options to create the server with (Node reads the check interval only there). */
export function serverOptions(limits: ResolvedLimits): ServerOptions {
  const d = deadlines(limits.requestTimeoutMs);
  return {
    connectionsCheckingInterval: d.checkEveryMs,
    requestTimeout: d.requestTimeout,
    headersTimeout: d.headersTimeout,
  };
}

/** At most `limits.maxConnections` open on `server`; refusals are logged at most every 10 s. */
export function boundConnections(server: Server, limits: ResolvedLimits, logger: WorkerLogger): void {
  server.maxConnections = limits.maxConnections;
  let dropped = 0;
  let reportedAt = Number.NEGATIVE_INFINITY;
  server.on('drop', () => {
    dropped += 1;
    const now = Date.now();
    if (now - reportedAt < DROP_REPORT_MS) return;
    logger.warn('connections refused: maxConnections reached', {
      maxConnections: limits.maxConnections,
      refused: dropped,
    });
    dropped = 0;
    reportedAt = now;
  });
}
