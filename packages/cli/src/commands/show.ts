/** `skein show ID [--json]`: an execution's state, its calls with attempts and durations, its takeovers. */
import type { ExecutionState, Stores } from '@skein/workflow-runtime';
import { executionDetail } from '../inspect.js';
import { duration, fields, type Io, iso, json, table } from '../output.js';
import { errorText, short } from '../timeline.js';

/** Print one execution. */
export async function showCommand(
  stores: Stores,
  id: string,
  options: { json?: boolean },
  io: Io,
): Promise<number> {
  const detail = await executionDetail(stores, id);
  const { state, timeline } = detail;
  if (options.json === true) {
    io.out(json({ state, calls: timeline.calls, takeovers: timeline.takeovers, children: detail.children }));
    return 0;
  }
  io.out(
    fields([
      ['execution', state.executionId],
      ['workflow', `${state.workflow} v${state.version}`],
      ['status', state.status],
      ['blocked', blockedText(state.blocked)],
      ['seq', state.sequence],
      ['fence', state.fence],
      ['started', iso(state.startedAt)],
      ['updated', iso(state.updatedAt)],
      ['parent', state.parentId],
      ['children', detail.children.length > 0 ? detail.children.join(', ') : undefined],
      ['waiting for', waitingFor(state)],
      ['cancel requested', state.cancel?.reason],
      ['output', state.status === 'completed' ? short(state.output, 200) : undefined],
      ['error', state.error === undefined ? undefined : errorText(state.error)],
    ]),
  );
  if (timeline.calls.length > 0) {
    io.out('\ncalls\n');
    io.out(
      table(
        ['#', 'kind', 'name', 'status', 'attempts', 'duration', 'detail'],
        timeline.calls.map((call) => [
          call.position,
          call.kind,
          call.name,
          call.status,
          call.kind === 'step' ? call.attempts.length : '',
          duration(call.endedAt === undefined ? undefined : call.endedAt - call.startedAt),
          call.attempts
            .filter((a) => a.error !== undefined)
            .map((a) => `attempt ${a.attempt}: ${a.error}`)
            .join('; ') ||
            (call.detail ?? ''),
        ]),
      ),
    );
  }
  io.out('\nwriters\n');
  io.out(
    table(
      ['seq', 'event', 'fence', 'at', 'reason'],
      timeline.takeovers.map((t) => [t.seq, t.type, t.fence, iso(t.at), t.reason]),
    ),
  );
  return 0;
}

function waitingFor(state: {
  status: string;
  awaiting?: { signals: string[]; children: string[] };
  timers: { dueAt: number }[];
}): string | undefined {
  if (state.status !== 'suspended') return undefined;
  const parts = [
    ...(state.awaiting?.signals ?? []).map((name) => `signal ${name}`),
    ...(state.awaiting?.children ?? []).map((child) => `child ${child}`),
    ...state.timers.map((timer) => `timer due ${iso(timer.dueAt)}`),
  ];
  return parts.length === 0 ? undefined : parts.join(', ');
}

/** A standing blockage in one line: code, since when, attempts, next automatic try, message. */
function blockedText(blocked: ExecutionState['blocked']): string | undefined {
  if (blocked === undefined) return undefined;
  const { code, since, attempts, retryAt, message } = blocked;
  return `${code} since ${iso(since)} (${attempts} attempts, next try ${iso(retryAt)}): ${short(message, 300)}`;
}
