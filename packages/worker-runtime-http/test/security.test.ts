/**
 * Every refused request gets the right status and writes nothing: the store has no execution
 * and no fence afterwards. Real HTTP on 127.0.0.1, raw requests with `node:http`.
 */
import { connect } from 'node:net';
import { createHttpWorker } from '@skein/worker-runtime-http';
import { defineWorkflow } from '@skein/workflow-runtime';
import { encode, MAX_EXECUTION_ID_LENGTH } from '@skein/workflow-runtime/internal';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  chunkedPost,
  forgedSigning,
  head,
  heldMemory,
  LAST_CHUNK,
  oneByteChunks,
  open,
  statusOf,
  within,
} from './support/sockets.js';
import {
  type RawRequest,
  raw,
  type Served,
  signingHeaders,
  types,
  until,
  workers,
} from './support/worker.js';

const w = workers();
let runs = 0;
const echo = defineWorkflow({
  name: 'echo',
  input: z.object({ word: z.string() }),
  async run(ctx, input) {
    return ctx.step('echo', () => {
      runs += 1;
      return input.word;
    });
  },
});

/** A start under fence 0: every execution's first, granted without a lease (adr/0003). */
const execute = (executionId: string, extra: Record<string, unknown> = {}): RawRequest => ({
  method: 'POST',
  path: '/v1/executions',
  body: encode({ executionId, workflow: 'echo', input: { word: 'hi' }, fence: 0, ...extra }),
});

/** Nothing about `executionId` is in the store: no log, no fence taken, no step run. */
async function nothingWritten(served: Served, executionId: string, runsBefore: number): Promise<void> {
  expect(await served.stores.events.getExecution(executionId)).toBeNull();
  expect(await served.stores.events.read(executionId)).toEqual([]);
  expect(await served.stores.events.currentFence(executionId)).toBe(0);
  expect(runs).toBe(runsBefore);
}

const body = (reply: { body: string }) => JSON.parse(reply.body) as Record<string, unknown>;

describe('HTTP worker: refusals write nothing', () => {
  it('a correctly signed request executes (the control for every refusal below)', async () => {
    const served = await w.serve([echo]);
    const reply = await raw(served.url, execute('ok-1'));
    expect(reply.status).toBe(200);
    expect(types(await served.runtime.history('ok-1'))).toContain('EXECUTION_COMPLETED');
  });

  it.each([
    ['unsigned', { sign: false } as const],
    ['signed with the wrong secret', { sign: { secret: 'another-secret-of-at-least-32-bytes!!' } }],
    ['timestamp older than the skew bound', { sign: { at: Date.now() - 31_000 } }],
    // Taken when the table is built, not when the case runs: far enough ahead to stay ahead.
    ['timestamp further ahead than the skew bound', { sign: { at: Date.now() + 120_000 } }],
    [
      'body tampered after signing',
      { sign: { body: encode({ executionId: 'x', workflow: 'echo', fence: 1 }) } },
    ],
    ['path tampered after signing', { sign: { path: '/v1/leases' } }],
  ])('401: %s', async (_title, change) => {
    const served = await w.serve([echo]);
    const before = runs;
    const reply = await raw(served.url, { ...execute('auth-1'), ...change });
    expect(reply.status).toBe(401);
    expect(body(reply)).toEqual({ error: 'unauthorized', code: 'unauthorized' });
    await nothingWritten(served, 'auth-1', before);
    expect(served.logged.map((line) => line.message)).toEqual(['request refused']);
  });

  it('401: a replayed request (same signature within the skew window) is refused; the first ran once', async () => {
    const served = await w.serve([echo]);
    const request = execute('replay-1');
    const headers = signingHeaders(request);
    expect((await raw(served.url, request, headers)).status).toBe(200);
    const log = await served.runtime.history('replay-1');
    const before = runs;
    const replayed = await raw(served.url, request, headers);
    expect(replayed.status).toBe(401);
    expect(await served.runtime.history('replay-1')).toEqual(log);
    expect(runs).toBe(before);
    expect(served.logged.at(-1)?.details.reason).toBe('replayed request');
  });

  it('401: a replayed lease request takes no second fence (a replay could otherwise fence out the holder)', async () => {
    const served = await w.serve([echo]);
    const request = {
      method: 'POST',
      path: '/v1/leases',
      body: encode({ executionId: 'replay-2', workflow: 'echo', input: { word: 'hi' } }),
    };
    const headers = signingHeaders(request);
    expect((await raw(served.url, request, headers)).status).toBe(200);
    const fence = await served.stores.events.currentFence('replay-2');
    expect((await raw(served.url, request, headers)).status).toBe(401);
    expect(await served.stores.events.currentFence('replay-2')).toBe(fence);
  });

  it('413: a declared Content-Length over the limit is refused at once, without reading the body', async () => {
    const served = await w.serve([echo], { maxBodyBytes: 64 * 1024 });
    const before = runs;
    const claimed = 1024 * 1024 * 1024;
    const headers = signingHeaders({ ...execute('big-1'), body: '' });
    const socket = connect(Number(served.url.port), '127.0.0.1');
    let sent = 0;
    const answer = new Promise<string>((resolve) => {
      let text = '';
      socket.on('data', (chunk) => {
        text += chunk.toString('utf8');
        if (text.includes('\r\n\r\n')) resolve(text);
      });
    });
    socket.on('error', () => undefined);
    const head = Object.entries({ ...headers, 'content-type': 'application/json', 'content-length': claimed })
      .map(([name, value]) => `${name}: ${value}`)
      .join('\r\n');
    socket.write(`POST /v1/executions HTTP/1.1\r\nhost: 127.0.0.1\r\n${head}\r\n\r\n`);
    // A slow stream: 1 KiB every 10 ms, far less than the claimed gigabyte.
    const drip = setInterval(() => {
      if (!socket.destroyed) sent += socket.write(Buffer.alloc(1024, 120)) ? 1024 : 0;
    }, 10);
    const text = await answer;
    clearInterval(drip);
    socket.destroy();
    expect(text.startsWith('HTTP/1.1 413')).toBe(true);
    expect(text.toLowerCase()).toContain('connection: close');
    // The answer came while almost all of the claimed body was still unsent.
    expect(sent).toBeLessThan(64 * 1024);
    await nothingWritten(served, 'big-1', before);
  });

  it('413: a chunked body (no Content-Length) is cut off as soon as it passes the limit', async () => {
    const served = await w.serve([echo], { maxBodyBytes: 64 * 1024 });
    const before = runs;
    const headers = signingHeaders({ ...execute('big-2'), body: '' });
    const socket = connect(Number(served.url.port), '127.0.0.1');
    let sent = 0;
    let closedByServer = false;
    socket.on('error', () => undefined);
    socket.on('end', () => {
      closedByServer = true;
    });
    const answer = new Promise<string>((resolve) => {
      let text = '';
      socket.on('data', (chunk) => {
        text += chunk.toString('utf8');
        if (text.includes('\r\n\r\n')) resolve(text);
      });
    });
    const head = Object.entries({
      ...headers,
      'content-type': 'application/json',
      'transfer-encoding': 'chunked',
    })
      .map(([name, value]) => `${name}: ${value}`)
      .join('\r\n');
    socket.write(`POST /v1/executions HTTP/1.1\r\nhost: 127.0.0.1\r\n${head}\r\n\r\n`);
    const chunk = Buffer.alloc(8 * 1024, 120);
    const drip = setInterval(() => {
      if (socket.destroyed || closedByServer) return;
      socket.write(`${chunk.length.toString(16)}\r\n`);
      socket.write(chunk);
      socket.write('\r\n');
      sent += chunk.length;
    }, 5);
    const text = await answer;
    clearInterval(drip);
    expect(text.startsWith('HTTP/1.1 413')).toBe(true);
    // The server answered after the limit was passed, not after the whole (endless) stream.
    expect(sent).toBeGreaterThan(64 * 1024);
    // An endless stream never ends, so any answer proves the cut; the bound says it came soon
    // (generous: a loaded host reads the socket late while the drip goes on).
    expect(sent).toBeLessThan(64 * 1024 * 32);
    socket.destroy();
    await nothingWritten(served, 'big-2', before);
  });

  it('400: malformed JSON is refused naming the body', async () => {
    const served = await w.serve([echo]);
    const before = runs;
    const reply = await raw(served.url, {
      method: 'POST',
      path: '/v1/executions',
      body: '{"executionId": "bad-1",',
    });
    expect(reply.status).toBe(400);
    expect(body(reply)).toMatchObject({ code: 'invalid_request', issues: [{ path: 'body' }] });
    await nothingWritten(served, 'bad-1', before);
  });

  it('400: an invalid body lists every bad field', async () => {
    const served = await w.serve([echo]);
    const before = runs;
    const reply = await raw(served.url, {
      method: 'POST',
      path: '/v1/executions',
      body: encode({ executionId: 'bad-2', workflow: '', fence: -1, extra: true }),
    });
    expect(reply.status).toBe(400);
    const paths = (body(reply).issues as { path: string }[]).map((issue) => issue.path).sort();
    expect(paths).toEqual(['body', 'body.fence', 'body.workflow']);
    await nothingWritten(served, 'bad-2', before);
  });

  it('400: a workflow name with a lone surrogate is refused naming body.workflow, and nothing written', async () => {
    const served = await w.serve([echo]);
    const before = runs;
    const reply = await raw(served.url, execute('bad-4', { workflow: 'echo\uDC00' }));
    expect(reply.status).toBe(400);
    expect(body(reply)).toMatchObject({ code: 'invalid_request', issues: [{ path: 'body.workflow' }] });
    expect(reply.body).toContain('lone surrogate');
    await nothingWritten(served, 'bad-4', before);
  });

  it('400: workflow input that fails its schema is refused listing the fields', async () => {
    const served = await w.serve([echo]);
    const before = runs;
    const reply = await raw(served.url, execute('bad-3', { input: { word: 42 } }));
    expect(reply.status).toBe(400);
    expect(body(reply)).toMatchObject({ code: 'invalid_request', issues: [{ path: 'input.word' }] });
    await nothingWritten(served, 'bad-3', before);
  });

  it('415: a body that is not application/json is refused', async () => {
    const served = await w.serve([echo]);
    const before = runs;
    const reply = await raw(served.url, { ...execute('type-1'), contentType: 'text/plain' });
    expect(reply.status).toBe(415);
    expect(body(reply).code).toBe('unsupported_media_type');
    await nothingWritten(served, 'type-1', before);
  });

  it.each([
    ['a slash', '/v1/executions/a/b'],
    ['a dot-dot segment', '/v1/executions/..'],
    ['an encoded slash', '/v1/executions/a%2Fb'],
    ['an encoded dot-dot', '/v1/executions/%2E%2E'],
    ['a malformed escape', '/v1/executions/%zz'],
    ['an id past the length limit', `/v1/executions/${'a'.repeat(MAX_EXECUTION_ID_LENGTH + 1)}`],
  ])('400: an execution id with %s in the path', async (_title, path) => {
    const served = await w.serve([echo]);
    const reply = await raw(served.url, { method: 'GET', path, contentType: null });
    expect(reply.status).toBe(400);
    expect(body(reply)).toMatchObject({ code: 'invalid_request', issues: [{ path: 'executionId' }] });
  });

  it.each([
    ['a slash', 'a/b'],
    ['a dot-dot', '..'],
    ['a percent sign', 'a%2Fb'],
    ['a length past the limit', 'a'.repeat(MAX_EXECUTION_ID_LENGTH + 1)],
    ['a lone surrogate', 'a\uD800'],
  ])('400: an execution id with %s in the body, and nothing written', async (_title, executionId) => {
    const served = await w.serve([echo]);
    const before = runs;
    const reply = await raw(served.url, execute(executionId));
    expect(reply.status).toBe(400);
    expect(body(reply)).toMatchObject({ code: 'invalid_request', issues: [{ path: 'body.executionId' }] });
    await nothingWritten(served, executionId, before);
  });

  it('an id of exactly the length limit is accepted', async () => {
    const served = await w.serve([echo]);
    const id = 'a'.repeat(MAX_EXECUTION_ID_LENGTH);
    expect((await raw(served.url, execute(id))).status).toBe(200);
    expect(
      (await raw(served.url, { method: 'GET', path: `/v1/executions/${id}`, contentType: null })).status,
    ).toBe(200);
  });

  it('500: an unexpected failure answers an error id and no stack; the full error is logged under that id', async () => {
    const served = await w.serve([echo]);
    const failing = served.stores.events;
    const original = failing.getExecution.bind(failing);
    failing.getExecution = async () => {
      throw new Error('disk on fire at /var/secret/path');
    };
    const reply = await raw(served.url, execute('boom-1'));
    failing.getExecution = original;
    expect(reply.status).toBe(500);
    const answer = body(reply);
    expect(Object.keys(answer).sort()).toEqual(['code', 'error', 'errorId', 'executionId']);
    expect(reply.body).not.toContain('disk on fire');
    expect(reply.body).not.toContain('    at ');
    const line = served.logged.find((entry) => entry.level === 'error')!;
    expect(line.details.errorId).toBe(answer.errorId);
    expect((line.details.error as Error).message).toContain('disk on fire');
  });

  it('the secret must be at least 32 bytes', async () => {
    const served = await w.serve([echo]);
    expect(() => createHttpWorker({ runtime: served.runtime, secret: 'short' })).toThrow(/options\.secret/);
    expect(() => createHttpWorker({ runtime: served.runtime, secret: 'x'.repeat(31) })).toThrow(/32 bytes/);
    expect(() => createHttpWorker({ runtime: served.runtime, secret: 'x'.repeat(32) })).not.toThrow();
  });
});

/** Resolves null after `ms`: the other side of a race with an answer that may not come. */
const pause = (ms: number) => new Promise<null>((resolve) => setTimeout(resolve, ms, null));

describe('HTTP worker: what anyone who reaches the port can hold (no secret needed)', () => {
  it('memory: bodies in 1-byte chunks from 8 connections hold about their bytes, not a Buffer per chunk', async () => {
    const served = await w.serve([echo], { maxBodyBytes: 128 * 1024 });
    const before = runs;
    const connections = 8;
    const bytes = 64 * 1024;
    // Before the body was copied chunk by chunk, each 1-byte chunk kept a Buffer (~190 bytes
    // of heap per 6 bytes on the wire): here ~100 MB for 512 KiB of bodies.
    const baseline = heldMemory();
    let peak = baseline;
    const sampler = setInterval(() => {
      peak = Math.max(peak, heldMemory());
    }, 5);
    try {
      const attacks = Array.from({ length: connections }, () => {
        const connection = open(served.url);
        connection.socket.write(chunkedPost('/v1/executions'));
        connection.socket.write(oneByteChunks(bytes));
        connection.socket.write(LAST_CHUNK);
        return connection.answered;
      });
      const answers = await Promise.all(attacks);
      // Every body was read in full (the signature is checked after it): a made-up one fails.
      expect(answers.map(statusOf)).toEqual(answers.map(() => 401));
    } finally {
      clearInterval(sampler);
    }
    peak = Math.max(peak, heldMemory());
    expect(peak - baseline).toBeLessThan(40 * 1024 * 1024);
    await nothingWritten(served, 'x', before);
  });

  it('maxPendingBodies: a body past the bound gets 503 unread; a bodiless request still passes; slots come back', async () => {
    const served = await w.serve([echo], { maxPendingBodies: 2 });
    const before = runs;
    const holders = [open(served.url), open(served.url)];
    for (const holder of holders) {
      holder.socket.write(chunkedPost('/v1/executions'));
      holder.socket.write(oneByteChunks(10));
    }
    // Both holders' bodies are being read once a third is refused for want of a slot.
    let refused = open(served.url);
    await until(async () => {
      refused.socket.destroy();
      refused = open(served.url);
      refused.socket.write(chunkedPost('/v1/executions'));
      refused.socket.write(oneByteChunks(1));
      const answer = await Promise.race([refused.answered, pause(200)]);
      return answer !== null && statusOf(answer) === 503;
    });
    expect(refused.received()).toContain('"code":"busy"');
    expect(refused.received().toLowerCase()).toContain('connection: close');
    await within(refused.closed, 5_000, 'the refused connection closed');
    const health = await raw(served.url, { method: 'GET', path: '/healthz', contentType: null });
    expect(health.status).toBe(200);
    for (const holder of holders) holder.socket.write(LAST_CHUNK);
    expect((await Promise.all(holders.map((holder) => holder.answered))).map(statusOf)).toEqual([401, 401]);
    await nothingWritten(served, 'x', before);
    // The slots are free again: a signed request with a body executes.
    expect((await raw(served.url, execute('after-busy'))).status).toBe(200);
    expect(served.logged.map((line) => line.message)).toContain(
      'too many request bodies in progress; request refused',
    );
  });

  it('maxConnections: connections past the bound are closed as they are accepted; the bound frees with them', async () => {
    const served = await w.serve([echo], { maxConnections: 3 });
    const held = [open(served.url), open(served.url), open(served.url)];
    // Each held connection has started a request, so the server has accepted all three.
    for (const connection of held) connection.socket.write('POST /v1/executions HTTP/1.1\r\n');
    let extra = open(served.url);
    await until(async () => {
      const closedAt = await Promise.race([extra.closed, pause(200)]);
      if (closedAt !== null) return true;
      extra.socket.destroy();
      extra = open(served.url);
      return false;
    });
    expect(extra.received()).toBe('');
    for (const connection of held) connection.socket.destroy();
    await until(async () => {
      const reply = await raw(served.url, { method: 'GET', path: '/healthz', contentType: null }).catch(
        () => null,
      );
      return reply?.status === 200;
    });
    expect(served.logged.map((line) => line.message)).toContain(
      'connections refused: maxConnections reached',
    );
  });

  it('a connection that sends nothing is closed after the headers bound, min(requestTimeoutMs, 10 s)', async () => {
    const served = await w.serve([echo], { requestTimeoutMs: 1_000 });
    const idle = open(served.url);
    // Before, Node looked at deadlines every 30 s: a silent connection held its fd that long.
    const closedAfter = await within(idle.closed, 5_000, 'the silent connection closed');
    expect(closedAfter).toBeGreaterThanOrEqual(850);
    expect(statusOf(idle.received())).toBe(408);
  });

  it('a request dripping its body is cut with 408 by requestTimeoutMs, not a check interval (30 s) later', async () => {
    const served = await w.serve([echo], { requestTimeoutMs: 1_000 });
    const before = runs;
    const slow = open(served.url);
    slow.socket.write(
      head('POST', '/v1/executions', {
        ...forgedSigning(),
        'content-type': 'application/json',
        'content-length': 100_000,
      }),
    );
    const drip = setInterval(() => slow.socket.write('x'), 50);
    try {
      const closedAfter = await within(slow.closed, 5_000, 'the slow request cut');
      expect(statusOf(slow.received())).toBe(408);
      expect(closedAfter).toBeGreaterThanOrEqual(850);
    } finally {
      clearInterval(drip);
    }
    await nothingWritten(served, 'x', before);
  });
});

const lease = (body: Record<string, unknown>): RawRequest => ({
  method: 'POST',
  path: '/v1/leases',
  body: encode(body),
});

const other = defineWorkflow({ name: 'other', input: z.object({}), run: async () => 'other' });

describe('HTTP worker: only a fence the store granted writes', () => {
  it('409 fence_not_granted: a start under a fence no lease gave writes nothing and raises no fence', async () => {
    const served = await w.serve([echo]);
    const before = runs;
    const reply = await raw(served.url, execute('fence-1', { fence: 7 }));
    expect(reply.status).toBe(409);
    expect(body(reply)).toEqual({
      error: 'fence was never granted; take a lease first',
      code: 'fence_not_granted',
      executionId: 'fence-1',
      fence: 7,
      current: 0,
    });
    await nothingWritten(served, 'fence-1', before);
  });

  it("409 fence_not_granted: a takeover under a fence above the head writes nothing; the log's fences never go backwards", async () => {
    const served = await w.serve([echo]);
    await served.runtime.enqueue(echo, { word: 'hi' }, { executionId: 'fence-2' });
    const granted = JSON.parse(
      (await raw(served.url, lease({ executionId: 'fence-2', workflow: 'echo' }))).body,
    ).fence as number;
    const before = runs;
    const reply = await raw(served.url, execute('fence-2', { fence: granted + 5 }));
    expect(reply.status).toBe(409);
    expect(body(reply)).toMatchObject({ code: 'fence_not_granted', fence: granted + 5, current: granted });
    expect(types(await served.runtime.history('fence-2'))).toEqual(['EXECUTION_STARTED']);
    expect(await served.stores.events.currentFence('fence-2')).toBe(granted);
    expect(runs).toBe(before);
    // The granted fence runs it; every fence in the log is at least the one before it.
    expect((await raw(served.url, execute('fence-2', { fence: granted }))).status).toBe(200);
    const fences = (await served.runtime.history('fence-2')).map((event) => event.fence);
    expect(fences).toEqual([...fences].sort((a, b) => a - b));
    expect(fences.at(-1)).toBe(granted);
  });

  it('400 unknown_workflow: a lease for a workflow the worker does not register takes no fence', async () => {
    const served = await w.serve([echo]);
    const before = runs;
    const reply = await raw(served.url, lease({ executionId: 'lease-1', workflow: 'nope', input: {} }));
    expect(reply.status).toBe(400);
    expect(body(reply)).toMatchObject({ code: 'unknown_workflow', executionId: 'lease-1' });
    await nothingWritten(served, 'lease-1', before);
  });

  it.each([
    ['no input', {}, 'input'],
    ['an input failing the schema', { input: { word: 42 } }, 'input.word'],
  ])('400 invalid_request: a lease for an unknown id with %s takes no fence', async (_title, extra, path) => {
    const served = await w.serve([echo]);
    const before = runs;
    const reply = await raw(served.url, lease({ executionId: 'lease-2', workflow: 'echo', ...extra }));
    expect(reply.status).toBe(400);
    expect(body(reply)).toMatchObject({ code: 'invalid_request', issues: [{ path }] });
    await nothingWritten(served, 'lease-2', before);
  });

  it('409 superseded: a lease naming another workflow for an existing execution takes no fence', async () => {
    const served = await w.serve([echo, other]);
    expect((await raw(served.url, execute('lease-3'))).status).toBe(200);
    const log = await served.runtime.history('lease-3');
    const reply = await raw(served.url, lease({ executionId: 'lease-3', workflow: 'other' }));
    expect(reply.status).toBe(409);
    expect(body(reply)).toMatchObject({ code: 'superseded', executionId: 'lease-3' });
    expect(await served.stores.events.currentFence('lease-3')).toBe(0);
    expect(await served.runtime.history('lease-3')).toEqual(log);
  });

  it('a lease joins a run in progress here only for the same workflow', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const held = defineWorkflow({
      name: 'held',
      input: z.object({}),
      run: async (ctx) => ctx.step('wait', () => gate.then(() => 'done')),
    });
    const served = await w.serve([held, other]);
    const running = raw(served.url, {
      method: 'POST',
      path: '/v1/executions',
      body: encode({ executionId: 'join-1', workflow: 'held', input: {}, fence: 0 }),
    });
    await until(async () => types(await served.runtime.history('join-1')).includes('STEP_STARTED'));
    const foreign = await raw(served.url, lease({ executionId: 'join-1', workflow: 'other' }));
    expect(foreign.status).toBe(409);
    expect(body(foreign)).toMatchObject({ code: 'superseded', executionId: 'join-1' });
    expect(await served.stores.events.currentFence('join-1')).toBe(0);
    const same = await raw(served.url, lease({ executionId: 'join-1', workflow: 'held' }));
    expect(JSON.parse(same.body).fence).toBe(0);
    release();
    expect((await running).status).toBe(200);
  });

  it('a lease for an existing execution needs no input; one for a new execution needs a valid input', async () => {
    const served = await w.serve([echo]);
    await served.runtime.enqueue(echo, { word: 'hi' }, { executionId: 'lease-4' });
    const existing = await raw(served.url, lease({ executionId: 'lease-4', workflow: 'echo' }));
    expect(existing.status).toBe(200);
    expect(JSON.parse(existing.body).fence).toBe(await served.stores.events.currentFence('lease-4'));
    const fresh = await raw(
      served.url,
      lease({ executionId: 'lease-5', workflow: 'echo', input: { word: 'a' } }),
    );
    expect(fresh.status).toBe(200);
    expect(JSON.parse(fresh.body).fence).toBe(1);
  });
});
