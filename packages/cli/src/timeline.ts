/**
 * An execution's log read for people: one line of summary per event, and the calls (steps,
 * sleeps, signal waits, children) with their attempts, durations, errors and retries, the
 * fences and takeovers (recoveries, resumes, cancellation). Built from the envelopes alone, so
 * it needs no workflow code. Payload values are shortened; the log itself has them whole.
 */
import type { Envelope, EventType } from '@skein/workflow-runtime';

/** One attempt of a step. */
export interface Attempt {
  attempt: number;
  fence: number;
  startedAt: number;
  endedAt?: number;
  /** `running`: no outcome recorded (in flight, or interrupted by a crash or a takeover). */
  outcome: 'completed' | 'failed' | 'retrying' | 'running';
  error?: string;
  retryAt?: number;
}

/** One positional context call, as the log tells it. */
export interface TimelineCall {
  position: number;
  kind: string;
  name: string;
  status: string;
  /** Recorded time of the first event of the call, and of the one that settled it. */
  startedAt: number;
  endedAt?: number;
  attempts: Attempt[];
  /** A child's id, a signal's id, a timer's due time, as the call has them. */
  detail?: string;
}

/** A change of writer: the start, a recovery, a resume, a cancellation, a dead-letter, an operator's resume. */
export interface Takeover {
  seq: number;
  type: EventType;
  fence: number;
  at: number;
  reason: string;
}

/** The model the `show` command and the inspector render. */
export interface Timeline {
  calls: TimelineCall[];
  takeovers: Takeover[];
  /** Recorded time of seq 0 and of the last event. */
  startedAt: number;
  endedAt: number;
}

type Payload = Record<string, unknown>;

const TAKEOVERS = new Set<EventType>([
  'EXECUTION_STARTED',
  'EXECUTION_RECOVERED',
  'EXECUTION_RESUMED',
  'EXECUTION_SUSPENDED',
  'CANCEL_REQUESTED',
  'EXECUTION_COMPLETED',
  'EXECUTION_FAILED',
  'EXECUTION_CANCELLED',
  'EXECUTION_DEAD_LETTERED',
  'EXECUTION_CONTINUED',
  'EXECUTION_REDRIVEN',
]);

/** Build the timeline of one execution's envelopes (in seq order). */
export function buildTimeline(envelopes: readonly Envelope[]): Timeline {
  const calls = new Map<number, TimelineCall>();
  const takeovers: Takeover[] = [];
  for (const envelope of envelopes) {
    const p = looseFields(envelope);
    const at = envelope.recordedAt.getTime();
    if (TAKEOVERS.has(envelope.type)) {
      takeovers.push({
        seq: envelope.seq,
        type: envelope.type,
        fence: envelope.fence,
        at,
        reason: reasonOf(envelope),
      });
      continue;
    }
    const position = typeof p.position === 'number' ? p.position : undefined;
    if (position === undefined || position < 0) continue; // patch markers
    applyCall(calls, position, envelope, p, at);
  }
  const first = envelopes[0]?.recordedAt.getTime() ?? 0;
  const last = envelopes.at(-1)?.recordedAt.getTime() ?? first;
  return {
    calls: [...calls.values()].sort((a, b) => a.position - b.position),
    takeovers,
    startedAt: first,
    endedAt: last,
  };
}

function applyCall(
  calls: Map<number, TimelineCall>,
  position: number,
  envelope: Envelope,
  p: Payload,
  at: number,
): void {
  const name = typeof p.name === 'string' ? p.name : '';
  let call = calls.get(position);
  const open = (kind: string): TimelineCall => {
    call ??= { position, kind, name, status: 'started', startedAt: at, attempts: [] };
    calls.set(position, call);
    return call;
  };
  switch (envelope.type) {
    case 'STEP_STARTED': {
      const c = open('step');
      c.attempts.push({
        attempt: num(p.attempt, c.attempts.length + 1),
        fence: envelope.fence,
        startedAt: at,
        outcome: 'running',
      });
      c.status = 'running';
      return;
    }
    case 'STEP_COMPLETED': {
      const c = open(typeof p.kind === 'string' ? p.kind : 'step');
      const attempt = c.attempts.at(-1);
      if (attempt !== undefined) Object.assign(attempt, { endedAt: at, outcome: 'completed' });
      c.status = 'completed';
      c.endedAt = at;
      if (c.kind !== 'step') c.detail = short(p.output);
      return;
    }
    case 'STEP_FAILED': {
      const c = open('step');
      const attempt = c.attempts.at(-1);
      const retrying = typeof p.retryAt === 'number';
      if (attempt !== undefined) {
        Object.assign(attempt, {
          endedAt: at,
          outcome: retrying ? 'retrying' : 'failed',
          error: errorText(p.error),
        });
        if (retrying) attempt.retryAt = p.retryAt as number;
      }
      c.status = retrying ? 'retrying' : 'failed';
      if (!retrying) c.endedAt = at;
      return;
    }
    case 'TIMER_SCHEDULED': {
      const c = open(p.purpose === 'signal' ? 'signal' : p.purpose === 'child' ? 'child' : 'sleep');
      if (c.kind === 'sleep') {
        c.status = 'scheduled';
        c.detail = `due ${new Date(num(p.dueAt, 0)).toISOString()}`;
      }
      return;
    }
    case 'TIMER_FIRED': {
      const c = open('sleep');
      if (c.kind === 'sleep' || c.kind === 'signal') {
        c.status = c.kind === 'signal' ? 'timed out' : 'fired';
        c.endedAt = at;
      }
      return;
    }
    case 'SIGNAL_RECEIVED': {
      const c = open('signal');
      c.status = 'received';
      c.endedAt = at;
      c.detail = `signal ${String(p.signalId)}: ${short(p.payload)}`;
      return;
    }
    case 'CHILD_STARTED': {
      const c = open('child');
      c.status = 'running';
      c.detail = `child ${String(p.childId)}`;
      return;
    }
    case 'CHILD_SETTLED': {
      const c = open('child');
      c.status = `child ${String(p.status)}`;
      c.endedAt = at;
      c.detail = `child ${String(p.childId)}`;
      return;
    }
    default:
      return;
  }
}

/**
 * The payload's fields, read loosely: the CLI shows logs that other versions may have written,
 * so each field is checked where it is used rather than trusted to `EventPayloads`.
 */
function looseFields(envelope: Envelope): Payload {
  const payload: unknown = envelope.payload;
  return (payload ?? {}) as Payload;
}

/** A one-line summary of an event, for tables. */
export function summarize(envelope: Envelope): string {
  const p = looseFields(envelope);
  switch (envelope.type) {
    case 'EXECUTION_STARTED':
      return (
        `${String(p.workflow)} v${String(p.version)} input ${short(p.input)}` +
        (typeof p.parentId === 'string' ? ` (child of ${p.parentId})` : '') +
        (typeof p.continuedFrom === 'object' && p.continuedFrom !== null
          ? ` (continues ${String((p.continuedFrom as { executionId?: unknown }).executionId)})`
          : '')
      );
    case 'EXECUTION_CONTINUED':
      return `continued as ${String(p.successorId)}`;
    case 'STEP_STARTED':
      return `step "${String(p.name)}" #${String(p.position)} attempt ${String(p.attempt)}`;
    case 'STEP_COMPLETED':
      return p.kind === 'step' || p.kind === undefined
        ? `step "${String(p.name)}" #${String(p.position)} output ${short(p.output)}`
        : `${String(p.kind)} #${String(p.position)} = ${short(p.output)}`;
    case 'STEP_FAILED':
      return (
        `step "${String(p.name)}" #${String(p.position)} attempt ${String(p.attempt)}: ${errorText(p.error)}` +
        (typeof p.retryAt === 'number'
          ? ` (retry at ${new Date(p.retryAt).toISOString()})`
          : ' (no retries left)')
      );
    case 'TIMER_SCHEDULED':
      return `${String(p.purpose)} "${String(p.name)}" #${String(p.position)} due ${new Date(num(p.dueAt, 0)).toISOString()}`;
    case 'TIMER_FIRED':
      return `timer #${String(p.position)} fired`;
    case 'SIGNAL_RECEIVED':
      return `signal "${String(p.name)}" #${String(p.position)} ${short(p.payload)}`;
    case 'CHILD_STARTED':
      return `child ${String(p.childId)} (${String(p.name)} v${String(p.version)}) #${String(p.position)}`;
    case 'CHILD_SETTLED':
      return `child ${String(p.childId)} ${String(p.status)}`;
    case 'EXECUTION_COMPLETED':
      return `output ${short(p.output)}`;
    default:
      return reasonOf(envelope);
  }
}

function reasonOf(envelope: Envelope): string {
  const p = looseFields(envelope);
  const parts: string[] = [];
  if (typeof p.reason === 'string') parts.push(p.reason);
  if (envelope.type === 'EXECUTION_STARTED') parts.push(`${String(p.workflow)} v${String(p.version)}`);
  if (Array.isArray(p.signals) && p.signals.length > 0) parts.push(`signals ${p.signals.join(', ')}`);
  if (Array.isArray(p.children) && p.children.length > 0) parts.push(`children ${p.children.join(', ')}`);
  if (typeof p.wakeAt === 'number') parts.push(`wake at ${new Date(p.wakeAt).toISOString()}`);
  if (p.error !== undefined && envelope.type !== 'EXECUTION_CANCELLED') parts.push(errorText(p.error));
  return parts.join('; ');
}

/** The error's name and message (or the thrown value), on one line. */
export function errorText(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`.replaceAll('\n', ' ');
  if (error !== null && typeof error === 'object' && 'message' in error)
    return String((error as { message: unknown }).message);
  return short(error);
}

/** A value as JSON, cut at `max` characters. */
export function short(value: unknown, max = 80): string {
  let text: string;
  try {
    text = value === undefined ? 'undefined' : (JSON.stringify(value, bigints) ?? String(value));
  } catch (error) {
    text = `[unprintable: ${error instanceof Error ? error.message : String(error)}]`;
  }
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function bigints(_key: string, value: unknown): unknown {
  if (typeof value === 'bigint') return `${value}n`;
  if (value instanceof Map) return Object.fromEntries(value);
  if (value instanceof Set) return [...value];
  return value;
}

function num(value: unknown, fallback: number): number {
  return typeof value === 'number' ? value : fallback;
}
