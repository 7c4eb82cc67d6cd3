/**
 * `skein ui`: the web inspector, a Hono app served by @hono/node-server. Read-only unless
 * started with `allowActions`; bound to 127.0.0.1 unless told otherwise. Action forms carry a
 * per-server token and must come from the inspector's own origin (hono/csrf), so another web
 * page open in the same browser cannot post them.
 */
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { type ExecutionStatus, ExecutionStatuses, SkeinError, type Stores } from '@skein/workflow-runtime';
import { deliverSignal, requestCancel } from '@skein/workflow-runtime/internal';
import { Hono } from 'hono';
import { csrf } from 'hono/csrf';
import { HTTPException } from 'hono/http-exception';
import { deadLetters, executionDetail, listPage } from '../inspect.js';
import {
  deadLettersPage,
  errorPage,
  executionPage,
  executionsPage,
  type PageContext,
  TIMELINE_PAGE_SIZE,
} from './pages.js';

/** Options of {@link createInspector}. */
export interface InspectorOptions {
  stores: Stores;
  /** Shown in the page header: which store this is. */
  label: string;
  /** Let the page cancel and signal executions (default: false, read-only). */
  allowActions?: boolean;
}

/**
 * The inspector as a Hono app (`app.fetch` serves it); see {@link startInspector} to listen.
 * @example
 * const app = createInspector({ stores, label: 'sqlite:./skein.db' });
 * const res = await app.request('/executions?status=failed');
 */
export function createInspector(options: InspectorOptions): Hono {
  const { stores } = options;
  const ctx: PageContext = {
    label: options.label,
    allowActions: options.allowActions === true,
    token: randomBytes(16).toString('hex'),
  };
  const app = new Hono();
  app.use(csrf());
  app.get('/', (c) => c.redirect('/executions'));
  app.get('/executions', async (c) => {
    const statusText = c.req.query('status') || undefined;
    const workflow = c.req.query('workflow') || undefined;
    const cursor = c.req.query('cursor') || undefined;
    const limit = Number(c.req.query('limit') || 50);
    if (statusText !== undefined && !(ExecutionStatuses as readonly string[]).includes(statusText))
      return c.html(
        errorPage(
          ctx,
          'Bad filter',
          `unknown status "${statusText}"; one of ${ExecutionStatuses.join(', ')}`,
        ),
        400,
      );
    const status = statusText as ExecutionStatus | undefined;
    const page = await listPage(stores, {
      ...(status === undefined ? {} : { status: [status] }),
      ...(workflow === undefined ? {} : { workflow }),
      limit,
      ...(cursor === undefined ? {} : { cursor }),
    });
    return c.html(executionsPage(ctx, page, { status, workflow, limit, cursor }));
  });
  app.get('/executions/:id', async (c) => {
    const detail = await executionDetail(stores, c.req.param('id'));
    const callsPage = pageParam(c.req.query('calls'), detail.timeline.calls.length);
    const eventsPage = pageParam(c.req.query('events'), detail.history.length);
    const done = c.req.query('done');
    const notice = done === undefined ? undefined : { text: done, error: c.req.query('failed') === '1' };
    return c.html(
      executionPage(ctx, detail, { callsPage, eventsPage, ...(notice === undefined ? {} : { notice }) }),
    );
  });
  app.get('/dead-letters', async (c) => {
    const cursor = c.req.query('cursor') || undefined;
    const page = await deadLetters(stores, { limit: 50, ...(cursor === undefined ? {} : { cursor }) });
    return c.html(deadLettersPage(ctx, page, cursor));
  });
  app.post('/executions/:id/cancel', async (c) => {
    const id = c.req.param('id');
    const form = await c.req.parseBody();
    const refused = refuse(ctx, form.token);
    if (refused !== undefined) return c.html(errorPage(ctx, 'Refused', refused), 403);
    const reason =
      typeof form.reason === 'string' && form.reason.trim() !== '' ? form.reason : 'cancelled from skein ui';
    const result = await requestCancel(stores, id, reason);
    const text = !result.cancelled
      ? `nothing to cancel: the execution is ${result.status}`
      : result.alreadyRequested === true
        ? 'a cancellation was already requested'
        : 'cancellation recorded (CANCEL_REQUESTED); a node that runs the workflow ends it cancelled';
    return c.redirect(`/executions/${encodeURIComponent(id)}?done=${encodeURIComponent(text)}`, 303);
  });
  app.post('/executions/:id/signal', async (c) => {
    const id = c.req.param('id');
    const form = await c.req.parseBody();
    const refused = refuse(ctx, form.token);
    if (refused !== undefined) return c.html(errorPage(ctx, 'Refused', refused), 403);
    const back = (text: string, failed: boolean) =>
      c.redirect(
        `/executions/${encodeURIComponent(id)}?done=${encodeURIComponent(text)}${failed ? '&failed=1' : ''}`,
        303,
      );
    let payload: unknown;
    try {
      payload = JSON.parse(String(form.payload ?? ''));
    } catch (error) {
      return back(`the payload is not JSON: ${error instanceof Error ? error.message : String(error)}`, true);
    }
    const result = await deliverSignal(stores, id, String(form.name ?? ''), payload);
    return back(
      result.handedOver
        ? `signal "${String(form.name)}" sent; the execution was waiting for it and is handed to a node that runs it`
        : `signal "${String(form.name)}" sent; it waits in the inbox`,
      false,
    );
  });
  app.onError((error, c) => {
    if (error instanceof HTTPException)
      return c.html(
        errorPage(ctx, 'Refused', `${error.message} (the request did not come from this inspector)`),
        error.status,
      );
    if (error instanceof SkeinError) {
      const code = error.code === 'EXECUTION_NOT_FOUND' ? 404 : 400;
      return c.html(errorPage(ctx, error.code, error.message), code);
    }
    return c.html(errorPage(ctx, 'Error', error instanceof Error ? error.message : String(error)), 500);
  });
  return app;
}

/** Why an action is refused, or undefined when it may go on. */
function refuse(ctx: PageContext, token: unknown): string | undefined {
  if (!ctx.allowActions)
    return 'the inspector is read-only: start it with skein ui --allow-actions to cancel or signal';
  if (token !== ctx.token)
    return 'the form is stale or did not come from this inspector: reload the page and try again';
  return undefined;
}

function pageParam(text: string | undefined, total: number): number {
  const page = Number(text ?? 0);
  const last = Math.max(0, Math.ceil(total / TIMELINE_PAGE_SIZE) - 1);
  return Number.isInteger(page) && page >= 0 ? Math.min(page, last) : 0;
}

/** A listening inspector. */
export interface RunningInspector {
  url: URL;
  close(): Promise<void>;
}

/**
 * Serve the inspector on `host:port` (default: 127.0.0.1, port 7878; port 0 picks a free one).
 * @example
 * const { url, close } = await startInspector({ stores, label: 'sqlite:./skein.db', port: 0 });
 */
export async function startInspector(
  options: InspectorOptions & { port?: number; host?: string },
): Promise<RunningInspector> {
  const app = createInspector(options);
  const host = options.host ?? '127.0.0.1';
  const server = serve({ fetch: app.fetch, port: options.port ?? 7878, hostname: host });
  await new Promise<void>((resolve, reject) => {
    if (server.listening) resolve();
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const address = server.address() as AddressInfo;
  const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: new URL(`http://${shown}:${address.port}/`),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error === undefined ? resolve() : reject(error)));
        if ('closeAllConnections' in server) server.closeAllConnections();
      }),
  };
}
