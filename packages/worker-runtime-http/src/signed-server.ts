/**
 * The signed request pipeline every Skein HTTP server shares (the HTTP worker and the executor
 * hub, docs/architecture.md#http-worker). Every request is checked in this order, and refused
 * before anything is written: signing headers and timestamp (401), declared size (413, unread),
 * content type (415), a free slot among the bodies being read (503, unread), size while
 * reading (413), signature and replay (401), route and method (404/405); the routes check
 * body fields (400). Connections and slow requests are bounded as server-limits.ts says.
 * Node-only.
 */
import { randomUUID } from 'node:crypto';
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { Authenticator } from './authenticate.js';
import type { Answer } from './failure-answer.js';
import type { ResolvedLimits, WorkerLogger } from './options.js';
import { hasBody, PendingBodies } from './pending-bodies.js';
import { type BodyRead, declaredTooLarge, readBody } from './read-body.js';
import { sendError, sendErrorAndClose, sendText } from './respond.js';
import { boundConnections, serverOptions } from './server-limits.js';
import { WireCodes } from './wire.js';

/** An answer with a body already encoded (the codec's JSON), or an error answer. */
export type Reply = Answer | { status: 200; text: string };

/** What a server serves once a request is authenticated: its routes. */
export interface Routes<R> {
  /** The route of a path (query excluded), and the method it takes (null: no such route). */
  routeOf(path: string): { route: R; method: 'GET' | 'POST' | null };
  /** True when requests of `route` carry a JSON body. */
  takesBody(route: R): boolean;
  /** Serve an authenticated request (its headers as Node read them). Never throws: every failure becomes an answer. */
  serve(route: R, body: Buffer, headers: IncomingHttpHeaders): Promise<Reply>;
}

/** How a signed server checks requests. */
export interface SignedServerOptions<R> {
  secret: Uint8Array;
  limits: ResolvedLimits;
  logger: WorkerLogger;
  clock: () => number;
  routes: Routes<R>;
}

const UNAUTHORIZED = { error: 'unauthorized', code: WireCodes.Unauthorized } as const;
const BUSY = { error: 'busy, retry later', code: WireCodes.Busy } as const;

interface Pipeline<R> {
  auth: Authenticator;
  limits: ResolvedLimits;
  logger: WorkerLogger;
  routes: Routes<R>;
  bodies: PendingBodies;
}

/** A `node:http` server whose every request goes through the signed pipeline. */
export function createSignedServer<R>(options: SignedServerOptions<R>): Server {
  const { limits, logger, routes } = options;
  const auth = new Authenticator(options.secret, limits.clockSkewMs, limits.maxSeenSignatures, options.clock);
  const pipeline: Pipeline<R> = {
    auth,
    limits,
    logger,
    routes,
    bodies: new PendingBodies(limits.maxPendingBodies),
  };
  const server = createServer(serverOptions(limits), (request, response) => {
    handle(request, response, pipeline).catch((error: unknown) => {
      // A failure of the pipeline itself (not of a route): logged under an id, answered 500.
      const errorId = randomUUID();
      logger.error('request handling failed', { errorId, error });
      if (!response.headersSent)
        sendError(response, 500, { error: 'internal error', code: WireCodes.Internal, errorId });
      else response.destroy();
    });
  });
  boundConnections(server, limits, logger);
  return server;
}

async function handle<R>(request: IncomingMessage, response: ServerResponse, p: Pipeline<R>): Promise<void> {
  const target = request.url ?? '/';
  const method = request.method ?? 'GET';
  const claim = p.auth.claim(request.headers);
  if (typeof claim === 'string') return refuse(request, response, claim, p.logger, target);
  if (declaredTooLarge(request, p.limits.maxBodyBytes)) return tooLarge(request, response, p.limits);
  const { route, method: allowed } = p.routes.routeOf(target.split('?', 1)[0]!);
  if (method === 'POST' && p.routes.takesBody(route) && !isJson(request.headers['content-type'])) {
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
  if (verdict !== 'ok') return refuse(request, response, verdict, p.logger, target, { bodyRead: true });
  if (allowed !== null && method !== allowed) {
    response.setHeader('allow', allowed);
    return sendError(response, 405, { error: `use ${allowed}`, code: WireCodes.MethodNotAllowed });
  }
  reply(response, await p.routes.serve(route, read.body, request.headers));
}

/** The body, read under a slot of the pending bodies; 'busy' (unread) when none is free. */
async function admittedBody<R>(request: IncomingMessage, p: Pipeline<R>): Promise<BodyRead | 'busy'> {
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
  { bodyRead = false }: { bodyRead?: boolean } = {},
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

/** Start listening; resolves with the server's base URL. */
export function listen(server: Server, port: number, host: string): Promise<URL> {
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

/**
 * Stop accepting, wait for `drain` (the work the open requests wait for), let their answers
 * flush, then drop whatever connection is left.
 */
export async function closeServer(server: Server, drain: () => Promise<void>): Promise<void> {
  if (!server.listening) return drain();
  const closed = new Promise<void>((resolve, reject) =>
    server.close((error) => (error === undefined ? resolve() : reject(error))),
  );
  server.closeIdleConnections();
  await drain();
  await new Promise((resolve) => setImmediate(resolve));
  server.closeAllConnections();
  await closed;
}
