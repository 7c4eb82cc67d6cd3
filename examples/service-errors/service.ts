/**
 * docs/errors.md: a `node:http` service in front of a runtime, answering every Skein error with
 * the HTTP status of its code and its JSON form as the body.
 * Run: npx tsx examples/service-errors/service.ts
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import {
  createRuntime,
  defineWorkflow,
  ExecutionNotFoundError,
  openMemoryStores,
  type Runtime,
  serializeError,
} from '@skein/workflow-runtime';
import { z } from 'zod';

/** The HTTP status a service answers for each code (the table of docs/errors.md). */
export const statusByCode: Readonly<Record<string, number>> = {
  INVALID_INPUT: 400,
  OUTBOX_MISSING: 500,
  TRANSPORT_CLOSED: 503,
  BROKER_CIRCUIT_OPEN: 503,
  BROKER_UNAVAILABLE: 503,
  AMQP_TRANSPORT_CLOSED: 503,
  UNKNOWN_SIGNAL: 400,
  SIGNAL_INBOX_FULL: 429,
  UNKNOWN_UPDATE: 400,
  UPDATE_FAILED: 422,
  UPDATE_TIMEOUT: 504,
  RESULT_TIMEOUT: 504,
  EXECUTION_NOT_RESUMABLE: 409,
  FORK_REFUSED: 409,
  RETRY_AFTER: 503,
  NOT_SERIALIZABLE: 422,
  SANDBOX_FUEL_EXHAUSTED: 422,
  SANDBOX_MEMORY_LIMIT: 422,
  SANDBOX_LOG_LIMIT: 422,
  SANDBOX_EVALUATOR_ERROR: 422,
  PAYLOAD_TOO_LARGE: 413,
  EXECUTION_NOT_FOUND: 404,
  UNKNOWN_WORKFLOW: 404,
  UNKNOWN_QUEUE: 400,
  UNKNOWN_DESTINATION: 500,
  UNKNOWN_SCHEDULE: 404,
  FANOUT_STALE_ATTEMPT: 409,
  FANOUT_NOT_SEEDED: 409,
  FANOUT_PLAN_MISMATCH: 409,
  EXECUTION_ALREADY_EXISTS: 409,
  EXECUTION_FINISHED: 409,
  EXECUTION_INPUT_MISMATCH: 409,
  DUPLICATE_SEQUENCE: 409,
  DUPLICATE_ENVELOPE_ID: 409,
  SEQUENCE_GAP: 409,
  STALE_FENCE: 409,
  FENCE_NOT_GRANTED: 409,
  EXECUTION_TERMINATED: 409,
  EXECUTION_SUPERSEDED: 409,
  EXECUTOR_STATE: 409,
  EXECUTOR_RUN_REFUSED: 409,
  CANCELLED: 409,
  DEADLINE_EXCEEDED: 409,
  START_FENCED_OUT: 503,
  STORAGE_WRITE_FAILED: 503,
  RUNTIME_CLOSED: 503,
  SANDBOX_POOL_CLOSED: 503,
  CIRCUIT_OPEN: 503,
  REMOTE_UNREACHABLE: 503,
  EXECUTOR_UNAVAILABLE: 503,
  SQLITE_STORE_CLOSED: 503,
  POSTGRES_STORE_CLOSED: 503,
  DISPATCH_FAILED: 502,
  REMOTE_WORKER_ERROR: 502,
  REMOTE_PROTOCOL: 502,
  RETAINED_RUN_INSPECTION: 502,
  STEP_TIMEOUT: 504,
  DISPATCH_TIMEOUT: 504,
  REMOTE_TIMEOUT: 504,
  SANDBOX_TIMEOUT: 504,
  EXECUTION_FAILED: 500,
  STEP_FAILED: 500,
  NON_RETRYABLE: 500,
  SANDBOX_TRAP: 500,
  SANDBOX_ARTIFACT_MISMATCH: 500,
  SANDBOX_CONTRACT_VIOLATION: 500,
  SANDBOX_BUILD_FAILED: 500,
  CHILD_FAILED: 500,
  NON_DETERMINISM: 500,
  INVALID_APPEND: 500,
  TENANT_SCOPE: 500,
  DUPLICATE_WORKFLOW: 500,
  INVALID_ERROR_CLASS: 500,
  SUPERVISOR_TICK_FAILED: 500,
  LEASE_MISMATCH: 500,
  QUEUE_SLOT_LAPSED: 500,
  SQLITE_MIGRATION_FAILED: 500,
  SQLITE_INVALID_OPTION: 500,
  POSTGRES_MIGRATION_FAILED: 500,
  POSTGRES_INVALID_OPTION: 500,
  POSTGRES_NUL_IN_TEXT: 400,
  POSTGRES_INVALID_CHANNEL: 500,
  POSTGRES_UNEXPECTED_APPEND_RESULT: 500,
  SIMULATED_CRASH: 500,
  INJECTED_FAULT: 500,
  INVARIANT_VIOLATED: 500,
  CRASH_INVARIANT_VIOLATED: 500,
  CLI_USAGE: 400,
  CLI_STORE_UNAVAILABLE: 503,
  CLI_WORKFLOW_MODULE: 400,
};

/** The status for `error`: its code's, or 500 for an error without a Skein code. */
export function statusOf(error: unknown): number {
  const code = error instanceof Error ? (error as { code?: unknown }).code : undefined;
  return (typeof code === 'string' ? statusByCode[code] : undefined) ?? 500;
}

/** A business failure of our own: registered, so the log gives it back as this class. */
export class PaymentDeclined extends Error {
  override name = 'PaymentDeclined';
  readonly code = 'PAYMENT_DECLINED';
  constructor(readonly amount: number) {
    super(`card declined for ${amount}`);
  }
}

export const order = defineWorkflow({
  name: 'order',
  input: z.object({ sku: z.string().min(1), qty: z.number().int().positive() }),
  signals: { note: z.string() },
  errors: [PaymentDeclined],
  async run(ctx, { sku, qty }) {
    return ctx.step('charge', () => {
      if (qty > 10) throw new PaymentDeclined(qty * 5);
      return { sku, charged: qty * 5 };
    });
  },
});

async function body(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return chunks.length === 0 ? undefined : JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

/** POST /orders/:id starts and awaits an order; GET /orders/:id reads it; POST /orders/:id/note signals it. */
async function route(runtime: Runtime, request: IncomingMessage): Promise<unknown> {
  const [, resource, id, action] = (request.url ?? '').split('/');
  if (resource !== 'orders' || id === undefined) throw new ExecutionNotFoundError(request.url ?? '');
  if (request.method === 'GET') {
    const state = await runtime.loadState(id);
    if (state === null) throw new ExecutionNotFoundError(id);
    return { status: state.status, output: state.output, error: serializeError(state.error) };
  }
  if (action === 'note') return runtime.signal(id, 'note', await body(request));
  return (await runtime.start(order, (await body(request)) as never, { executionId: id })).result();
}

/** Listen on a free loopback port; resolve the server and its base URL. */
export async function serve(runtime: Runtime): Promise<{ server: Server; url: string }> {
  const server = createServer((request, response) => {
    route(runtime, request).then(
      (result) => {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify(result ?? null));
      },
      (error: unknown) => {
        response.writeHead(statusOf(error), { 'content-type': 'application/json' });
        response.end(JSON.stringify({ error: serializeError(error) }));
      },
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

export async function main(): Promise<unknown> {
  const stores = openMemoryStores();
  const runtime = createRuntime({ stores, workflows: [order] });
  const { server, url } = await serve(runtime);
  const post = (path: string, data: unknown) =>
    fetch(`${url}${path}`, { method: 'POST', body: JSON.stringify(data) }).then(async (r) => [
      r.status,
      await r.json(),
    ]);
  const answers = [
    await post('/orders/ok', { sku: 'a', qty: 2 }),
    await post('/orders/big', { sku: 'a', qty: 50 }),
  ];
  await new Promise((resolve) => server.close(resolve));
  await runtime.close();
  return answers;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(JSON.stringify(await main(), null, 2));
