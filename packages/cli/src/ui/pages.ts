/**
 * The inspector's pages, rendered on the server (hono/html escapes every interpolated value):
 * executions with filters and paging, one execution's timeline, dead letters. Long lists are
 * paged on the server, so a page holds at most a few hundred rows whatever the log's length.
 */
import { type ExecutionStatus, ExecutionStatuses, isTerminalStatus } from '@skein/workflow-runtime';
import { html } from 'hono/html';
import type { DeadLetter, ExecutionDetail, ExecutionsPage } from '../inspect.js';
import { duration, iso } from '../output.js';
import { errorText, short, summarize, type TimelineCall } from '../timeline.js';
import { STYLE } from './style.js';

type Html = ReturnType<typeof html>;

/** Rows per page of the timeline's calls and events. */
export const TIMELINE_PAGE_SIZE = 200;

/** What every page needs to know about the server. */
export interface PageContext {
  label: string;
  allowActions: boolean;
  /** The token every action form carries (a per-server secret). */
  token: string;
}

/** The frame around every page. */
export function layout(ctx: PageContext, title: string, body: Html): Html {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${title} · skein</title>
<meta name="viewport" content="width=device-width, initial-scale=1"><style>${STYLE}</style></head>
<body><header><a class="brand" href="/executions">skein</a><a href="/executions">executions</a>
<a href="/dead-letters">dead letters</a><span class="store">${ctx.label}${ctx.allowActions ? '' : ' · read-only'}</span></header>
<main>${body}</main></body></html>`;
}

function status(s: string): Html {
  return html`<span class="status ${s}" data-status="${s}">${s.replace('_', ' ')}</span>`;
}

/** The executions list with its status and workflow filters. */
export function executionsPage(
  ctx: PageContext,
  page: ExecutionsPage,
  filter: {
    status: ExecutionStatus | undefined;
    workflow: string | undefined;
    limit: number;
    cursor: string | undefined;
  },
): Html {
  const query = (cursor: string | undefined) => {
    const q = new URLSearchParams();
    if (filter.status !== undefined) q.set('status', filter.status);
    if (filter.workflow !== undefined) q.set('workflow', filter.workflow);
    q.set('limit', String(filter.limit));
    if (cursor !== undefined) q.set('cursor', cursor);
    return `/executions?${q.toString()}`;
  };
  const rows = page.items.map(
    (
      item,
    ) => html`<tr data-execution="${item.executionId}"><td class="mono"><a href="/executions/${encodeURIComponent(item.executionId)}">${item.executionId}</a></td>
<td>${item.workflow}</td><td>${item.version ?? ''}</td><td>${status(item.status)}</td><td>${item.sequence}</td><td class="mono">${iso(item.updatedAt)}</td></tr>`,
  );
  return layout(
    ctx,
    'executions',
    html`<h1>Executions</h1>
<form class="filters" method="get" action="/executions">
<label>status<select name="status" id="status-filter"><option value="">any</option>${ExecutionStatuses.map(
      (s) => html`<option value="${s}" ${s === filter.status ? 'selected' : ''}>${s}</option>`,
    )}</select></label>
<label>workflow<input name="workflow" id="workflow-filter" value="${filter.workflow ?? ''}" placeholder="any"></label>
<label>per page<input name="limit" type="number" min="1" max="1000" value="${filter.limit}"></label>
<button type="submit" id="apply-filters">filter</button></form>
${
  page.items.length === 0
    ? html`<p class="muted" id="no-executions">No executions match.</p>`
    : html`<table id="executions"><thead><tr><th>execution</th><th>workflow</th><th>version</th><th>status</th><th>seq</th><th>updated</th></tr></thead>
<tbody>${rows}</tbody></table>`
}
<div class="pager">${filter.cursor === undefined ? '' : html`<a href="${query(undefined)}">first page</a>`}
${page.nextCursor === undefined ? '' : html`<a id="next-page" href="${query(page.nextCursor)}">next page</a>`}</div>`,
  );
}

/** One execution: its fields, actions, calls with duration bars, writers, and a page of events. */
export function executionPage(
  ctx: PageContext,
  detail: ExecutionDetail,
  view: { callsPage: number; eventsPage: number; notice?: { text: string; error: boolean } },
): Html {
  const { state, timeline, history } = detail;
  const id = state.executionId;
  const span = Math.max(1, timeline.endedAt - timeline.startedAt);
  const calls = timeline.calls.slice(
    view.callsPage * TIMELINE_PAGE_SIZE,
    (view.callsPage + 1) * TIMELINE_PAGE_SIZE,
  );
  const events = history.slice(
    view.eventsPage * TIMELINE_PAGE_SIZE,
    (view.eventsPage + 1) * TIMELINE_PAGE_SIZE,
  );
  const base = `/executions/${encodeURIComponent(id)}`;
  const link = (callsPage: number, eventsPage: number) => `${base}?calls=${callsPage}&events=${eventsPage}`;
  return layout(
    ctx,
    id,
    html`${view.notice === undefined ? '' : html`<div class="notice ${view.notice.error ? 'error' : ''}" id="notice">${view.notice.text}</div>`}
<h1>Execution <span class="mono">${id}</span> ${status(state.status)}</h1>
<dl class="fields">
<dt>workflow</dt><dd>${state.workflow} v${state.version}</dd>
${state.blocked === undefined ? '' : html`<dt>blocked</dt><dd class="err" id="blocked">${state.blocked.code} since ${iso(state.blocked.since)} (${state.blocked.attempts} attempts, next try ${iso(state.blocked.retryAt)}): ${state.blocked.message}</dd>`}
<dt>seq / fence</dt><dd>${state.sequence} / ${state.fence}</dd>
<dt>started</dt><dd class="mono">${iso(state.startedAt)}</dd>
<dt>updated</dt><dd class="mono">${iso(state.updatedAt)}</dd>
${state.parentId === undefined ? '' : html`<dt>parent</dt><dd class="mono"><a href="/executions/${encodeURIComponent(state.parentId)}">${state.parentId}</a></dd>`}
${detail.children.length === 0 ? '' : html`<dt>children</dt><dd class="mono">${detail.children.map((c) => html`<a href="/executions/${encodeURIComponent(c)}">${c}</a> `)}</dd>`}
${state.awaiting === undefined ? '' : html`<dt>waiting for</dt><dd>${[...state.awaiting.signals.map((s) => `signal ${s}`), ...state.awaiting.children.map((c) => `child ${c}`)].join(', ')}</dd>`}
${state.timers.length === 0 ? '' : html`<dt>timers</dt><dd class="mono">${state.timers.map((t) => `due ${iso(t.dueAt)}`).join(', ')}</dd>`}
${state.cancel === undefined ? '' : html`<dt>cancel requested</dt><dd>${state.cancel.reason}</dd>`}
${state.status === 'completed' ? html`<dt>output</dt><dd class="mono">${short(state.output, 400)}</dd>` : ''}
${state.error === undefined ? '' : html`<dt>error</dt><dd class="err">${errorText(state.error)}</dd>`}
</dl>
${actions(ctx, id, state.status)}
<h2>Calls (${timeline.calls.length})</h2>
${pager('calls', view.callsPage, timeline.calls.length, (p) => link(p, view.eventsPage))}
<table id="calls"><thead><tr><th>#</th><th>kind</th><th>name</th><th>status</th><th>duration</th><th>timeline</th><th>attempts and errors</th></tr></thead>
<tbody>${calls.map((call) => callRow(call, timeline.startedAt, span))}</tbody></table>
<h2>Writers: starts, fences, recoveries, suspensions</h2>
<table id="writers"><thead><tr><th>seq</th><th>event</th><th>fence</th><th>at</th><th>reason</th></tr></thead>
<tbody>${timeline.takeovers.map((t) => html`<tr><td>${t.seq}</td><td class="mono">${t.type}</td><td>${t.fence}</td><td class="mono">${iso(t.at)}</td><td>${t.reason}</td></tr>`)}</tbody></table>
<h2>Events (${history.length})</h2>
${pager('events', view.eventsPage, history.length, (p) => link(view.callsPage, p))}
<table id="events"><thead><tr><th>seq</th><th>at</th><th>type</th><th>fence</th><th>summary</th></tr></thead>
<tbody>${events.map((e) => html`<tr data-type="${e.type}"><td>${e.seq}</td><td class="mono">${iso(e.recordedAt.getTime())}</td><td class="mono">${e.type}</td><td>${e.fence}</td><td class="mono">${summarize(e)}</td></tr>`)}</tbody></table>`,
  );
}

function callRow(call: TimelineCall, t0: number, span: number): Html {
  const segments =
    call.kind === 'step' && call.attempts.length > 0
      ? call.attempts.map((a) => ({ from: a.startedAt, to: a.endedAt ?? a.startedAt, cls: a.outcome }))
      : [
          {
            from: call.startedAt,
            to: call.endedAt ?? call.startedAt,
            cls: call.endedAt === undefined ? 'running' : 'completed',
          },
        ];
  const bars = segments.map((s) => {
    const left = ((s.from - t0) / span) * 100;
    const width = Math.max(0.4, ((s.to - s.from) / span) * 100);
    return html`<div class="bar ${s.cls}" style="left:${left.toFixed(2)}%;width:${Math.min(width, 100 - left).toFixed(2)}%"></div>`;
  });
  const errors = call.attempts.filter((a) => a.error !== undefined);
  return html`<tr data-call="${call.position}"><td>${call.position}</td><td>${call.kind}</td><td class="mono">${call.name}</td><td>${call.status}</td>
<td>${duration(call.endedAt === undefined ? undefined : call.endedAt - call.startedAt)}</td><td><div class="lane">${bars}</div></td>
<td>${call.kind === 'step' ? `${call.attempts.length} attempt${call.attempts.length === 1 ? '' : 's'}` : (call.detail ?? '')}
${errors.map((a) => html`<div class="err">attempt ${a.attempt}: ${a.error}${a.retryAt === undefined ? '' : ` (retry at ${iso(a.retryAt)})`}</div>`)}</td></tr>`;
}

function pager(what: string, current: number, total: number, href: (page: number) => string): Html {
  const pages = Math.max(1, Math.ceil(total / TIMELINE_PAGE_SIZE));
  if (pages === 1) return html``;
  return html`<div class="pager" id="${what}-pager">${current > 0 ? html`<a href="${href(current - 1)}" id="${what}-prev">previous</a>` : ''}
<span>page ${current + 1} of ${pages}</span>${current + 1 < pages ? html`<a href="${href(current + 1)}" id="${what}-next">next</a>` : ''}</div>`;
}

function actions(ctx: PageContext, id: string, s: ExecutionStatus): Html {
  if (isTerminalStatus(s)) return html``;
  if (!ctx.allowActions)
    return html`<p class="readonly" id="read-only">Read-only: start the inspector with <code>skein ui --allow-actions</code> to cancel or signal.</p>`;
  const base = `/executions/${encodeURIComponent(id)}`;
  return html`<div class="actions">
<form method="post" action="${base}/cancel" id="cancel-form"><input type="hidden" name="token" value="${ctx.token}">
<label>reason<input name="reason" id="cancel-reason" value="cancelled from skein ui" required></label>
<button class="danger" type="submit" id="cancel-button">cancel execution</button></form>
<form method="post" action="${base}/signal" id="signal-form"><input type="hidden" name="token" value="${ctx.token}">
<label>signal<input name="name" id="signal-name" required></label>
<label>payload (JSON)<input name="payload" id="signal-payload" value="null" required></label>
<button type="submit" id="signal-button">send signal</button></form></div>`;
}

/** Dead-lettered executions with their reasons. */
export function deadLettersPage(
  ctx: PageContext,
  page: { items: DeadLetter[]; nextCursor?: string },
  cursor: string | undefined,
): Html {
  return layout(
    ctx,
    'dead letters',
    html`<h1>Dead letters</h1>
${
  page.items.length === 0
    ? html`<p class="muted" id="no-dead-letters">No dead-lettered executions.</p>`
    : html`<table id="dead-letters"><thead><tr><th>execution</th><th>workflow</th><th>dead-lettered</th><th>reason</th></tr></thead>
<tbody>${page.items.map((d) => html`<tr><td class="mono"><a href="/executions/${encodeURIComponent(d.executionId)}">${d.executionId}</a></td><td>${d.workflow}</td><td class="mono">${iso(d.deadLetteredAt)}</td><td>${d.reason}</td></tr>`)}</tbody></table>`
}
<div class="pager">${cursor === undefined ? '' : html`<a href="/dead-letters">first page</a>`}
${page.nextCursor === undefined ? '' : html`<a href="/dead-letters?cursor=${encodeURIComponent(page.nextCursor)}">next page</a>`}</div>`,
  );
}

/** A page that says what went wrong. */
export function errorPage(ctx: PageContext, title: string, message: string): Html {
  return layout(
    ctx,
    title,
    html`<h1>${title}</h1><div class="notice error" id="error">${message}</div><p><a href="/executions">back to executions</a></p>`,
  );
}
