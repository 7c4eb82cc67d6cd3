/** Options of the HTTP worker and their defaults. */
import type { Runtime } from '@skein/workflow-runtime';
import { z } from 'zod';
import { MIN_SECRET_BYTES } from './signing.js';

/** Where the worker logs what it refuses and what failed. */
export interface WorkerLogger {
  /** A refused request (bad signature, replay, ...); `details` says which and why. */
  warn(message: string, details: Record<string, unknown>): void;
  /** An unexpected failure; `details.errorId` is the id the 500 answer carries. */
  error(message: string, details: Record<string, unknown>): void;
}

/** Limits of {@link createHttpWorker}. */
export interface WorkerLimits {
  /** Largest request body in bytes; a larger one is refused with 413 unread (default: 1 MiB). */
  maxBodyBytes?: number;
  /** How far a request's timestamp may be from the worker's clock, either way, in ms (default: 30 000). */
  clockSkewMs?: number;
  /** Signatures remembered for replay detection; when all are live, new requests get 503 (default: 100 000). */
  maxSeenSignatures?: number;
  /**
   * Time to receive a whole request (headers and body) in ms; a request not received by then
   * is cut with 408, and its headers must arrive within min(this, 10 000). A connection that
   * sends nothing is closed after min(this, 10 000) (default: 30 000).
   */
  requestTimeoutMs?: number;
  /** Connections open at once; more are closed as they are accepted (default: 1024). */
  maxConnections?: number;
  /**
   * Request bodies being received at once, before their signatures can be checked; a request
   * with a body beyond this gets 503 unread. With `maxBodyBytes`, it bounds the memory that
   * unverified bodies hold (default: 32, i.e. 32 MiB at the default body limit).
   */
  maxPendingBodies?: number;
}

/** Options of {@link createHttpWorker}. */
export interface HttpWorkerOptions {
  /** The runtime that executes; its stores hand out the fences. */
  runtime: Runtime;
  /** Shared secret of the HMAC signatures, at least 32 bytes (no default: required). */
  secret: string | Uint8Array;
  /** Request limits (default: see {@link WorkerLimits}). */
  limits?: WorkerLimits;
  /** Where refusals and failures are logged (default: `console.warn` / `console.error`). */
  logger?: WorkerLogger;
  /** Milliseconds since the epoch, for the skew check (default: `Date.now`). */
  clock?: () => number;
  /**
   * Told the W3C `traceparent` an execute request carried, before its run starts; the
   * function it returns, if any, is called when the run ends (default: none; a malformed
   * header is ignored). `@skein/opentelemetry`'s `CallerContexts.adopt` fits.
   */
  onTraceparent?: (executionId: string, traceparent: string) => (() => void) | undefined;
}

/** The limits with every default filled in. */
export type ResolvedLimits = Required<WorkerLimits>;

export const DEFAULT_LIMITS: ResolvedLimits = {
  maxBodyBytes: 1024 * 1024,
  clockSkewMs: 30_000,
  maxSeenSignatures: 100_000,
  requestTimeoutMs: 30_000,
  maxConnections: 1024,
  maxPendingBodies: 32,
};

/** A secret of at least 32 bytes. */
export const secretSchema = z
  .union([z.string(), z.instanceof(Uint8Array)])
  .refine(
    (secret) =>
      (typeof secret === 'string' ? Buffer.byteLength(secret, 'utf8') : secret.byteLength) >=
      MIN_SECRET_BYTES,
    `must be at least ${MIN_SECRET_BYTES} bytes`,
  );

export const limitsSchema = z.object({
  maxBodyBytes: z.number().int().positive().optional(),
  clockSkewMs: z.number().int().positive().optional(),
  maxSeenSignatures: z.number().int().positive().optional(),
  requestTimeoutMs: z.number().int().positive().optional(),
  maxConnections: z.number().int().positive().optional(),
  maxPendingBodies: z.number().int().positive().optional(),
});

export const workerOptionsSchema = z.object({
  runtime: z.custom<Runtime>(
    (value) => typeof value === 'object' && value !== null && 'execute' in value && 'stores' in value,
    'must be a Runtime',
  ),
  secret: secretSchema,
  limits: limitsSchema.optional(),
  logger: z
    .custom<WorkerLogger>(
      (value) => typeof value === 'object' && value !== null && 'warn' in value && 'error' in value,
      'must have warn and error functions',
    )
    .optional(),
  clock: z.custom<() => number>((value) => typeof value === 'function', 'must be a function').optional(),
  onTraceparent: z
    .custom<(executionId: string, traceparent: string) => (() => void) | undefined>(
      (value) => typeof value === 'function',
      'must be a function',
    )
    .optional(),
});

export const consoleLogger: WorkerLogger = {
  warn: (message, details) => console.warn(`skein http worker: ${message}`, details),
  error: (message, details) => console.error(`skein http worker: ${message}`, details),
};
