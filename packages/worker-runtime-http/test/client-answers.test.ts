/**
 * How the client reads answers, against a stub worker that answers whatever a test says: a
 * 409 is a superseded refusal only when both its code and its execution id match.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ExecutionSupersededError, isSupersededRefusal } from '@skein/worker-runtime';
import {
  RemoteProtocolError,
  RemoteTimeoutError,
  RemoteUnreachableError,
  RemoteWorkerError,
  RemoteWorkerRuntime,
} from '@skein/worker-runtime-http';
import { InvalidInputError, StartFencedOutError } from '@skein/workflow-runtime';
import { afterEach, describe, expect, it } from 'vitest';
import { SECRET } from './support/worker.js';

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** A stub worker answering every request with `status` and `body` (after `delayMs`). */
async function stub(status: number, body: unknown, delayMs = 0): Promise<{ url: URL; requests: number }> {
  const seen = { url: new URL('http://127.0.0.1/'), requests: 0 };
  const server = createServer((request, response) => {
    seen.requests += 1;
    request.resume();
    setTimeout(() => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(typeof body === 'string' ? body : JSON.stringify(body));
    }, delayMs);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  seen.url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
  return seen;
}

const pkg = { executionId: 'exec-1', workflow: 'w', input: {} };
const lease = { executionId: 'exec-1', fence: 3, workerId: 'stub', allocatedAt: 0 };
const client = (url: URL, timeoutMs = 2_000) => new RemoteWorkerRuntime({ url, secret: SECRET, timeoutMs });

describe('RemoteWorkerRuntime: answers', () => {
  it('409 superseded naming this execution becomes ExecutionSupersededError', async () => {
    const { url } = await stub(409, {
      error: 'execution superseded',
      code: 'superseded',
      executionId: 'exec-1',
    });
    const error = await client(url)
      .execute(lease, pkg)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ExecutionSupersededError);
    expect(isSupersededRefusal(error, 'exec-1')).toBe(true);
  });

  it('409 superseded naming another execution is an ordinary failure', async () => {
    const { url } = await stub(409, {
      error: 'execution superseded',
      code: 'superseded',
      executionId: 'other',
    });
    const error = await client(url)
      .execute(lease, pkg)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RemoteWorkerError);
    expect(isSupersededRefusal(error, 'exec-1')).toBe(false);
    expect((error as RemoteWorkerError).status).toBe(409);
  });

  it('409 with another code naming this execution is an ordinary failure', async () => {
    const { url } = await stub(409, { error: 'conflict', code: 'conflict', executionId: 'exec-1' });
    const error = await client(url)
      .execute(lease, pkg)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RemoteWorkerError);
    expect(isSupersededRefusal(error, 'exec-1')).toBe(false);
  });

  it('409 start_fenced_out becomes StartFencedOutError with its fences, which a dispatcher retries', async () => {
    const body = { error: 'x', code: 'start_fenced_out', executionId: 'exec-1', fence: 3, current: 4 };
    const { url } = await stub(409, body);
    const error = await client(url)
      .execute(lease, pkg)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StartFencedOutError);
    expect(error).toMatchObject({ executionId: 'exec-1', fence: 3, current: 4 });
  });

  it('500 becomes RemoteWorkerError carrying the error id', async () => {
    const { url } = await stub(500, { error: 'internal error', code: 'internal', errorId: 'e-77' });
    const error = await client(url)
      .execute(lease, pkg)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RemoteWorkerError);
    expect(error).toMatchObject({ status: 500, remoteCode: 'internal', errorId: 'e-77' });
    expect((error as Error).message).toContain('e-77');
  });

  it('an answer that is not an error body, or a state of another execution, is a protocol error', async () => {
    const garbled = await stub(502, '<html>bad gateway</html>');
    expect(
      await client(garbled.url)
        .execute(lease, pkg)
        .catch((e: unknown) => e),
    ).toBeInstanceOf(RemoteProtocolError);
    const wrong = await stub(200, { executionId: 'other', status: 'completed' });
    expect(
      await client(wrong.url)
        .execute(lease, pkg)
        .catch((e: unknown) => e),
    ).toBeInstanceOf(RemoteProtocolError);
  });

  it('no answer within timeoutMs is RemoteTimeoutError; a closed port is RemoteUnreachableError', async () => {
    const slow = await stub(200, {}, 1_000);
    const timedOut = await client(slow.url, 100)
      .execute(lease, pkg)
      .catch((e: unknown) => e);
    expect(timedOut).toBeInstanceOf(RemoteTimeoutError);
    expect(timedOut).toMatchObject({ executionId: 'exec-1', timeoutMs: 100 });
    const closed = await stub(200, {});
    const server = servers.pop()!;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    expect(
      await client(closed.url)
        .execute(lease, pkg)
        .catch((e: unknown) => e),
    ).toBeInstanceOf(RemoteUnreachableError);
  });

  it('bad input is refused before any request: a lease of another execution, an id with a slash, bad options', async () => {
    const seen = await stub(200, {});
    const remote = client(seen.url);
    await expect(remote.execute({ ...lease, executionId: 'other' }, pkg)).rejects.toBeInstanceOf(
      InvalidInputError,
    );
    await expect(remote.allocate({ ...pkg, executionId: 'a/b' })).rejects.toThrow(/package\.executionId/);
    await expect(remote.getExecution('..')).rejects.toThrow(/executionId/);
    expect(seen.requests).toBe(0);
    expect(() => new RemoteWorkerRuntime({ url: 'not a url', secret: SECRET })).toThrow(/options\.url/);
    expect(() => new RemoteWorkerRuntime({ url: seen.url, secret: 'short' })).toThrow(/options\.secret/);
    expect(() => new RemoteWorkerRuntime({ url: seen.url, secret: SECRET, timeoutMs: 0 })).toThrow(
      /options\.timeoutMs/,
    );
  });
});
