/** The worker's routes and limits besides execution: health, unknown routes, methods, the replay bound. */
import { createHttpWorker } from '@skein/worker-runtime-http';
import { defineWorkflow } from '@skein/workflow-runtime';
import { encode } from '@skein/workflow-runtime/internal';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { raw, workers } from './support/worker.js';

const w = workers();
const noop = defineWorkflow({ name: 'noop', input: z.object({}), run: async () => 'ok' });

describe('HTTP worker: routes', () => {
  it('GET /healthz answers when signed, 401 when not', async () => {
    const served = await w.serve([noop]);
    const reply = await raw(served.url, { method: 'GET', path: '/healthz', contentType: null });
    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.body)).toEqual({ ok: true, nodeId: served.runtime.nodeId });
    const unsigned = await raw(served.url, {
      method: 'GET',
      path: '/healthz',
      contentType: null,
      sign: false,
    });
    expect(unsigned.status).toBe(401);
  });

  it('an unknown route is 404 and a wrong method 405 with Allow, both after authentication', async () => {
    const served = await w.serve([noop]);
    expect((await raw(served.url, { method: 'GET', path: '/v2/anything', contentType: null })).status).toBe(
      404,
    );
    const wrong = await raw(served.url, { method: 'GET', path: '/v1/executions', contentType: null });
    expect(wrong.status).toBe(405);
    expect(wrong.headers.allow).toBe('POST');
    expect(
      (await raw(served.url, { method: 'GET', path: '/v2/anything', contentType: null, sign: false })).status,
    ).toBe(401);
  });

  it('POST /v1/leases takes a new fence per attempt and names the worker', async () => {
    const served = await w.serve([noop]);
    const lease = (id: string) =>
      raw(served.url, {
        method: 'POST',
        path: '/v1/leases',
        body: encode({ executionId: id, workflow: 'noop', input: {} }),
      });
    const first = JSON.parse((await lease('lease-1')).body) as { fence: number; workerId: string };
    const second = JSON.parse((await lease('lease-1')).body) as { fence: number };
    expect(second.fence).toBeGreaterThan(first.fence);
    expect(first.workerId).toBe(served.runtime.nodeId);
    expect(await served.stores.events.currentFence('lease-1')).toBe(second.fence);
  });

  it('503 when the replay cache is full of live signatures (fails closed, never forgets a live one)', async () => {
    const served = await w.serve([noop], { maxSeenSignatures: 2 });
    const health = () => raw(served.url, { method: 'GET', path: '/healthz', contentType: null });
    expect((await health()).status).toBe(200);
    expect((await health()).status).toBe(200);
    const refused = await health();
    expect(refused.status).toBe(503);
    expect(JSON.parse(refused.body).code).toBe('busy');
  });

  it('bad options are refused naming the field', async () => {
    const served = await w.serve([noop]);
    const secret = 'x'.repeat(32);
    expect(() => createHttpWorker({ runtime: served.runtime, secret, limits: { maxBodyBytes: 0 } })).toThrow(
      /options\.limits\.maxBodyBytes/,
    );
    expect(() => createHttpWorker({ runtime: {} as never, secret })).toThrow(/options\.runtime/);
  });
});
