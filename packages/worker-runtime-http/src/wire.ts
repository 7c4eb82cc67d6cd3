/**
 * What crosses the wire: request bodies, lease and error answers. Bodies are the Skein codec's
 * JSON (plain JSON, with Date, BigInt, Map, ... as `{"$t": tag, "v": value}`), so inputs,
 * outputs and states keep their types end to end.
 */
import { wellFormed } from '@skein/workflow-runtime/internal';
import { z } from 'zod';
import { wireExecutionId } from './execution-id.js';

/** Paths of the worker. */
export const Paths = {
  executions: '/v1/executions',
  leases: '/v1/leases',
  health: '/healthz',
} as const;

/** Stable `code`s of the worker's error answers. */
export const WireCodes = {
  Superseded: 'superseded',
  StartFencedOut: 'start_fenced_out',
  FenceNotGranted: 'fence_not_granted',
  InvalidRequest: 'invalid_request',
  UnknownWorkflow: 'unknown_workflow',
  Unauthorized: 'unauthorized',
  NotFound: 'not_found',
  MethodNotAllowed: 'method_not_allowed',
  PayloadTooLarge: 'payload_too_large',
  UnsupportedMediaType: 'unsupported_media_type',
  Busy: 'busy',
  Internal: 'internal',
  SessionUnknown: 'session_unknown',
  SessionRevoked: 'session_revoked',
  SessionExpired: 'session_expired',
  SessionReplaced: 'session_replaced',
  SessionClosed: 'session_closed',
  NotYourRun: 'not_your_run',
  UnknownRun: 'unknown_run',
} as const;

/** An error answer: plain data, never a class instance (STYLE 4). */
export interface WireError {
  /** Human-readable summary. */
  error: string;
  /** One of {@link WireCodes}. */
  code: string;
  executionId?: string;
  /** Id under which a 500 was logged. */
  errorId?: string;
  /** Refused fields (400). */
  issues?: { path: string; message: string }[];
  /** Fences of a start that was fenced out (409 `start_fenced_out`) or of a fence never granted (409 `fence_not_granted`). */
  fence?: number;
  current?: number;
}

const packageFields = {
  executionId: wireExecutionId,
  workflow: wellFormed(z.string().min(1).max(1024)),
  input: z.unknown().optional(),
  version: z.number().int().positive().optional(),
  startOnly: z.boolean().optional(),
};

/** Body of `POST /v1/leases`: the package an attempt is for. */
export const leaseRequestSchema = z.strictObject(packageFields);

/** Body of `POST /v1/executions`: the package and the fence of the caller's lease. */
export const executeRequestSchema = z.strictObject({
  ...packageFields,
  fence: z.number().int().nonnegative(),
});

/** Answer of `POST /v1/leases`. */
export const leaseAnswerSchema = z.object({
  executionId: z.string(),
  fence: z.number().int().nonnegative(),
  workerId: z.string(),
  allocatedAt: z.number(),
});

/** An error answer, as the client reads it. */
export const wireErrorSchema = z.object({
  error: z.string(),
  code: z.string(),
  executionId: z.string().optional(),
  errorId: z.string().optional(),
  issues: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  fence: z.number().optional(),
  current: z.number().optional(),
});
