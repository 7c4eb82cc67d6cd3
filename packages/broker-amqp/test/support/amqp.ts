/**
 * RabbitMQ for the tests: the broker at `SKEIN_AMQP_URL` (default: the local one), a fresh
 * prefix per test whose exchanges and queues are deleted afterwards, a client-provided
 * connection name per transport so a test closes only its own connections, and a loud skip
 * when no broker answers (a failure under `CI=true`).
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { AmqpTransport, type AmqpTransportOptions } from '@skein/broker-amqp';
import { Connection } from 'rabbitmq-client';
import { it } from 'vitest';

/** The broker the tests use. */
export const AMQP_URL = process.env.SKEIN_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672';

async function probe(): Promise<unknown> {
  const connection = new Connection({ url: AMQP_URL, retryLow: 100, retryHigh: 200 });
  connection.on('error', () => undefined);
  try {
    await connection.onConnect(3_000, true);
    return undefined;
  } catch (error) {
    return error;
  } finally {
    await connection.close().catch(() => undefined);
  }
}

const unreachable = await probe();
if (unreachable !== undefined) {
  const reason = unreachable instanceof Error ? unreachable.message : String(unreachable);
  if (process.env.CI === 'true') throw new Error(`RabbitMQ is not reachable at ${AMQP_URL}: ${reason}`);
  console.warn(`\n!!! RabbitMQ is NOT reachable at ${AMQP_URL} (${reason}): its tests are SKIPPED !!!\n`);
}

/** Register `register`'s tests when a broker answers, otherwise one skipped test that says why. */
export function whenAmqp(register: () => void): void {
  if (unreachable === undefined) register();
  else it.skip(`RabbitMQ is not reachable at ${AMQP_URL}`, () => {});
}

let counter = 0;

/** A prefix no other test (in any process) uses. */
export function freshPrefix(): string {
  counter += 1;
  return `skeintest.${process.pid}.${counter}.${Math.random().toString(36).slice(2, 8)}`;
}

/** A transport on `prefix` with a connection name of its own (`skeintest:<prefix>`). */
export function connectTransport(
  prefix: string,
  options: Partial<AmqpTransportOptions> = {},
): Promise<AmqpTransport> {
  return AmqpTransport.connect({
    url: AMQP_URL,
    prefix,
    connectionName: `skeintest:${prefix}`,
    reconnect: { stepMs: 100, maxMs: 1_000 },
    retry: TEST_RETRY,
    onError: () => undefined,
    ...options,
  });
}

/** The retry backoff the tests' transports use unless told otherwise. */
export const TEST_RETRY = { initialMs: 100, maxMs: 800 };

/** Delete the exchanges and the queues of `topics` under `prefix` (and the retry queues of `retry`). */
export async function deleteTopology(
  prefix: string,
  topics: readonly string[],
  retry = TEST_RETRY,
): Promise<void> {
  await AmqpTransport.deleteTopology({
    url: AMQP_URL,
    prefix,
    topics,
    retry,
    connectionName: `skeintest:${prefix}`,
  });
}

const run = promisify(execFile);

/** `rabbitmqctl` with `args`; its standard output. */
export async function rabbitmqctl(...args: string[]): Promise<string> {
  return (await run('rabbitmqctl', args, { timeout: 60_000 })).stdout;
}

/** Close every broker connection whose client-provided name is `name`; returns how many. */
export async function closeConnectionsNamed(name: string): Promise<number> {
  const out = await rabbitmqctl(
    'list_connections',
    '--no-table-headers',
    '--silent',
    'pid',
    'client_properties',
  );
  const pids = out
    .split('\n')
    .filter((line) => line.includes(`"${name}"`) || line.includes(`<<"${name}">>`) || line.includes(name))
    .map((line) => line.split('\t')[0]!.trim())
    .filter((pid) => pid !== '');
  for (const pid of pids) await rabbitmqctl('close_connection', pid, 'skein test closes its own connection');
  return pids.length;
}

/** How many messages `queue` holds, ready and unacked. */
export async function queueDepth(queue: string): Promise<number> {
  const connection = new Connection({ url: AMQP_URL });
  connection.on('error', () => undefined);
  try {
    const ok = await connection.queueDeclare({ queue, passive: true });
    return ok.messageCount;
  } finally {
    await connection.close();
  }
}
