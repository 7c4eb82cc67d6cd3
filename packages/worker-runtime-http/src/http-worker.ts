/**
 * `createHttpWorker`: executions over HTTP on `node:http` (docs/architecture.md#http-worker).
 * Requests go through the signed pipeline of signed-server.ts (signing, size, content type,
 * replay, route), and are refused before anything is written. Node-only.
 */
import { parseWith } from '@skein/workflow-runtime/internal';
import { InFlightRuns } from './in-flight.js';
import {
  consoleLogger,
  DEFAULT_LIMITS,
  type HttpWorkerOptions,
  type ResolvedLimits,
  workerOptionsSchema,
} from './options.js';
import { type RouteDeps, routeOf, serve, takesBody } from './routes.js';
import { closeServer, createSignedServer, listen } from './signed-server.js';
import { secretBytes } from './signing.js';

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
  const runs = new InFlightRuns(parsed.runtime);
  const deps: RouteDeps = { runtime: parsed.runtime, runs, logger, onTraceparent: parsed.onTraceparent };
  const server = createSignedServer({
    secret: secretBytes(parsed.secret),
    limits,
    logger,
    clock: parsed.clock ?? Date.now,
    routes: { routeOf, takesBody, serve: (route, body, headers) => serve(route, body, deps, headers) },
  });
  return {
    listen: (port, host) => listen(server, port ?? 0, host ?? '127.0.0.1'),
    close: () => closeServer(server, () => runs.drain()),
  };
}
