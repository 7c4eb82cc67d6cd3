/**
 * `createHttpWorker`: executions over HTTP on `node:http` (docs/architecture.md#http-worker). Every request is
 * checked in this order, and refused before anything is written: signing headers and
 * timestamp (401), declared size (413, unread), content type (415), a free slot among the
 * bodies being read (503, unread), size while reading (413), signature and replay (401), body
 * fields (400). Connections and slow requests are bounded as server-limits.ts says. Node-only.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseWith } from '@skein/workflow-runtime';
import { Authenticator } from './authenticate.js';
import { InFlightRuns } from './in-flight.js';
import {
  consoleLogger,
  DEFAULT_LIMITS,
  type HttpWorkerOptions,
  type ResolvedLimits,
  type WorkerLogger,
  workerOptionsSchema,
} from './options.js';
import { hasBody, PendingBodies } from './pending-bodies.js';
import { type BodyRead, declaredTooLarge, readBody } from './read-body.js';
import { sendError, sendErrorAndClose, sendText } from './respond.js';
import { type Reply, type RouteDeps, routeOf, serve, takesBody } from './routes.js';
import { boundConnections, serverOptions } from './server-limits.js';
import { secretBytes } from './signing.js';
import { WireCodes } from './wire.js';

/** A running (or not yet listening) HTTP worker. */
export interface HttpWorker {
  /**
   * Start listening; resolves with the worker's base URL.
   * @param port TCP port (default: 0, an ephemeral port).
   * @param host interface to bind (default: `127.0.0.1`).
   */
  listen(port?: number, host?: string): Promise<URL>;
  /** Stop accepting requests, wait for the runs in progress, close every connection. The runtime stays open. */
  close(): Promise<void>;
}

const UNAUTHORIZED = { error: 'unauthorized', code: WireCodes.Unauthorized } as const;
const BUSY = { error: 'busy, retry later', code: WireCodes.Busy } as const;

/**
 * Create a worker that executes packages sent over HTTP on `runtime`.
 * @example
 * const worker = createHttpWorker({ runtime, secret: process.env.SKEIN_SECRET! });
 * const url = await worker.listen(8080, '0.0.0.0');
 * // elsewhere: new RemoteWorkerRuntime({ url, secret, timeoutMs: 30_000 })
 */
export function createHttpWorker(options: HttpWorkerOptions): HttpWorker {
  const parsed = parseWith(workerOptionsSchema, options, 'createHttpWorker options', 'options');
  const limits: ResolvedLimits = { ...DEFAULT_LIMITS, ...parsed.limits };
  const logger = parsed.logger ?? consoleLogger;
  const clock = parsed.clock ?? Date.now;
  const auth = new Authenticator(
    secretBytes(parsed.secret),
    limits.clockSkewMs,
    limits.maxSeenSignatures,
    clock,
  );
  const runs = new InFlightRuns(parsed.runtime);
  const deps: RouteDeps = { runtime: parsed.runtime, runs, logger };
  const bodies = new PendingBodies(limits.maxPendingBodies);
  const server = createServer(serverOptions(limits), (request, response) => {
    handle(request, response, { auth, limits, logger, deps, bodies }).catch((error: unknown) => {
      // A failure of the pipeline itself (not of a run): logged under an id, answered 500.
      const errorId = randomUUID();
      logger.error('request handling failed', { errorId, error });
      if (!response.headersSent)
        sendError(response, 500, { error: 'internal error', code: WireCodes.Internal, errorId });
      else response.destroy();
    });
  });
  boundConnections(server, limits, logger);
  return {
    listen: (port, host) => listen(server, port ?? 0, host ?? '127.0.0.1'),
    close: () => close(server, runs),
  };
}

interface Pipeline {
  auth: Authenticator;
  limits: ResolvedLimits;
  logger: WorkerLogger;
  deps: RouteDeps;
  bodies: PendingBodies;
}

async function handle(request: IncomingMessage, response: ServerResponse, p: Pipeline): Promise<void> {
  const target = request.url ?? '/';
  const method = request.method ?? 'GET';
  const claim = p.auth.claim(request.headers);
  if (typeof claim === 'string') return refuse(request, response, claim, p.logger, target);
  if (declaredTooLarge(request, p.limits.maxBodyBytes)) return tooLarge(request, response, p.limits);
  const { route, method: allowed } = routeOf(target.split('?', 1)[0]!);
  if (method === 'POST' && takesBody(route) && !isJson(request.headers['content-type'])) {
    const body = { error: 'content type must be application/json', code: WireCodes.UnsupportedMediaType };
    return sendErrorAndClose(request, response, 415, body);
  }
  const read = await admittedBody(request, p);
  if (read === 'busy') {
    p.logger.warn('too many request bodies in progress; request refused', { target });
    return sendErrorAndClose(request, response, 503, BUSY);
  }
  if (read.kind === 'too-large') return tooLarge(request, response, p.limits);
  if (read.kind === 'aborted') return void request.socket.destroy();
  const verdict = p.auth.verify(claim, { method, path: target, body: read.body });
  if (verdict === 'busy') {
    p.logger.warn('replay cache full of live signatures; request refused', { target });
    return sendError(response, 503, BUSY);
  }
  if (verdict !== 'ok') return refuse(request, response, verdict, p.logger, target, true);
  if (allowed !== null && method !== allowed) {
    response.setHeader('allow', allowed);
    return sendError(response, 405, { error: `use ${allowed}`, code: WireCodes.MethodNotAllowed });
  }
  reply(response, await serve(route, read.body, p.deps));
}

/** The body, read under a slot of the pending bodies; 'busy' (unread) when none is free. */
async function admittedBody(request: IncomingMessage, p: Pipeline): Promise<BodyRead | 'busy'> {
  if (!hasBody(request)) return readBody(request, p.limits.maxBodyBytes);
  if (!p.bodies.admit()) return 'busy';
  try {
    return await readBody(request, p.limits.maxBodyBytes);
  } finally {
    p.bodies.release();
  }
}

function reply(response: ServerResponse, answer: Reply): void {
  if ('text' in answer) sendText(response, answer.status, answer.text);
  else sendError(response, answer.status, answer.body);
}

function refuse(
  request: IncomingMessage,
  response: ServerResponse,
  reason: string,
  logger: WorkerLogger,
  target: string,
  bodyRead = false,
): void {
  logger.warn('request refused', {
    reason,
    method: request.method,
    target,
    from: request.socket.remoteAddress,
  });
  if (bodyRead) sendError(response, 401, UNAUTHORIZED);
  else sendErrorAndClose(request, response, 401, UNAUTHORIZED);
}

function tooLarge(request: IncomingMessage, response: ServerResponse, limits: ResolvedLimits): void {
  const body = {
    error: `request body is over ${limits.maxBodyBytes} bytes`,
    code: WireCodes.PayloadTooLarge,
  };
  sendErrorAndClose(request, response, 413, body);
}

function isJson(contentType: string | undefined): boolean {
  return contentType !== undefined && /^application\/json\s*(;|$)/i.test(contentType.trim());
}

function listen(server: Server, port: number, host: string): Promise<URL> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const address = server.address() as AddressInfo;
      const hostPart = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      resolve(new URL(`http://${hostPart}:${address.port}/`));
    });
  });
}

async function close(server: Server, runs: InFlightRuns): Promise<void> {
  if (!server.listening) return runs.drain();
  const closed = new Promise<void>((resolve, reject) =>
    server.close((error) => (error === undefined ? resolve() : reject(error))),
  );
  server.closeIdleConnections();
  await runs.drain();
  // Let the answers of the drained runs flush, then drop whatever connection is left.
  await new Promise((resolve) => setImmediate(resolve));
  server.closeAllConnections();
  await closed;
}
