/**
 * What crosses the wire between an executor and its hub (docs/executors.md): session
 * negotiation, heartbeats, the long poll that hands out runs and inspection requests, result
 * reports and inspection answers. Bodies are the codec's JSON, signed like every request.
 */
import { wellFormed } from '@skein/workflow-runtime/internal';
import { z } from 'zod';
import { wireExecutionId } from '../execution-id.js';

/** Paths of the hub. */
export const ExecutorPaths = {
  sessions: '/v1/executor/sessions',
  heartbeat: '/v1/executor/heartbeat',
  close: '/v1/executor/close',
  poll: '/v1/executor/poll',
  results: '/v1/executor/results',
  inspections: '/v1/executor/inspections',
} as const;

/** Longest transaction id, in bytes (E5). */
export const MAX_TRANSACTION_ID_BYTES = 256;

/** Longest executor id, hub incarnation or session id, in characters. */
export const MAX_SESSION_FIELD = 128;

const token = z
  .string()
  .min(1)
  .max(MAX_SESSION_FIELD)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:-]*$/, 'must be ASCII letters, digits and ". _ : -"');

/** An executor id. */
export const executorIdSchema = token;

/** A binding on the wire: the hub incarnation and the session id. */
export const bindingSchema = z.strictObject({ incarnation: token, sessionId: token });

/** Who sends a request: the executor and the session it holds now. */
const sender = { executorId: executorIdSchema, session: bindingSchema };

/** Body of `POST /v1/executor/sessions`. */
export const openSessionSchema = z.strictObject({
  executorId: executorIdSchema,
  packageVersion: wellFormed(z.string().min(1).max(MAX_SESSION_FIELD)),
});

/** Answer of `POST /v1/executor/sessions`. */
export const sessionAnswerSchema = z.object({
  incarnation: token,
  sessionId: token,
  heartbeatMs: z.number().int().positive(),
  ttlMs: z.number().int().positive(),
});

/** Body of `POST /v1/executor/heartbeat`. */
export const heartbeatSchema = z.strictObject(sender);

/** Body of `POST /v1/executor/poll`: wait up to `waitMs` for work. */
export const pollSchema = z.strictObject({ ...sender, waitMs: z.number().int().nonnegative().max(25_000) });

const transactionId = z
  .string()
  .min(1)
  .refine((id) => Buffer.byteLength(id, 'utf8') <= MAX_TRANSACTION_ID_BYTES, 'must be at most 256 bytes');

/** A run handed to the session. */
export const runOfferSchema = z.strictObject({
  kind: z.literal('run'),
  executionId: wireExecutionId,
  fence: z.number().int().nonnegative(),
  workflow: wellFormed(z.string().min(1).max(1024)),
  version: z.number().int().positive().optional(),
  input: z.unknown().optional(),
  transactionId,
  dueAt: z.number().int().nonnegative(),
});

/** An inspection the hub asks the session to answer. */
export const inspectRequestSchema = z.strictObject({
  kind: z.literal('inspect'),
  requestId: token,
  /** Not checked here: a malformed id must reach the executor and come back as an error. */
  executionId: z.string().max(4096),
  session: bindingSchema,
});

/** Answer of `POST /v1/executor/poll`. */
export const pollAnswerSchema = z.object({
  items: z.array(z.union([runOfferSchema, inspectRequestSchema])),
});

/** Body of `POST /v1/executor/results`: a result under the binding that accepted the run. */
export const reportSchema = z.strictObject({
  ...sender,
  executionId: wireExecutionId,
  fence: z.number().int().nonnegative(),
  binding: bindingSchema,
  transactionId,
  outcome: z.enum(['completed', 'failed']),
  /** The codec's JSON of the output or the error, exactly as retained. */
  result: z.string(),
  exitCode: z.number().int(),
  exitMessage: z.string().max(4096),
  chosenAt: z.number().int().nonnegative(),
});

/** What FOUND shows of a retained run: never the program or its arguments. */
export const foundRunSchema = z.strictObject({
  executionId: z.string(),
  fence: z.number().int(),
  binding: bindingSchema.nullable(),
  transactionId: z.string(),
  started: z.boolean(),
  startMarker: z.number().int().nullable(),
  dueAt: z.number().int(),
});

/** An executor's answer to an inspection. */
export const inspectionAnswerSchema = z.union([
  z.strictObject({ status: z.literal('FOUND'), run: foundRunSchema }),
  z.strictObject({ status: z.literal('FILTERED') }),
  z.strictObject({ status: z.literal('ABSENT') }),
  z.strictObject({
    status: z.literal('ERROR'),
    reason: z.enum(['not-current-session', 'malformed-id', 'oversized-field', 'read-failed', 'shutdown']),
    detail: z.string().max(4096),
  }),
]);

/** Body of `POST /v1/executor/inspections`. */
export const inspectionReplySchema = z.strictObject({
  ...sender,
  requestId: token,
  answer: inspectionAnswerSchema,
});

export type RunOffer = z.infer<typeof runOfferSchema>;
export type InspectRequest = z.infer<typeof inspectRequestSchema>;
export type Report = z.infer<typeof reportSchema>;
export type InspectionAnswer = z.infer<typeof inspectionAnswerSchema>;
export type FoundRun = z.infer<typeof foundRunSchema>;
