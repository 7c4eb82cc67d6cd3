/**
 * `skein history ID [--from seq] [--follow] [--json]`: the log, one event a line. With
 * `--follow` it keeps polling for new events and ends when the execution ends (or on Ctrl-C).
 */
import { type Envelope, ExecutionNotFoundError, type Stores } from '@skein/workflow-runtime';
import { isTerminalType, toEnvelope } from '@skein/workflow-runtime/internal';
import { type Io, iso, jsonLine } from '../output.js';
import { summarize } from '../timeline.js';

/** Options of `skein history`. */
export interface HistoryOptions {
  from?: number;
  follow?: boolean;
  /** Poll interval of `--follow` in ms (default: 500). */
  intervalMs?: number;
  json?: boolean;
  /** Ends a follow early (Ctrl-C). */
  signal?: AbortSignal;
}

const PAGE = 1_000;

/** Print the log of one execution (and, with `follow`, what is appended to it). */
export async function historyCommand(
  stores: Stores,
  id: string,
  options: HistoryOptions,
  io: Io,
): Promise<number> {
  if ((await stores.events.getExecution(id)) === null) throw new ExecutionNotFoundError(id);
  let next = options.from ?? 0;
  const print = (envelope: Envelope) => io.out(options.json === true ? jsonLine(envelope) : line(envelope));
  for (;;) {
    const batch = await stores.events.read(id, next, PAGE);
    for (const stored of batch) {
      const envelope = toEnvelope(stored);
      print(envelope);
      next = envelope.seq + 1;
      if (options.follow === true && isTerminalType(envelope.type)) return 0;
    }
    if (batch.length === PAGE) continue;
    if (options.follow !== true) return 0;
    if (await pause(options.intervalMs ?? 500, options.signal)) return 0;
  }
}

/** One event as a line: seq, time, type, fence, summary. */
function line(envelope: Envelope): string {
  const seq = String(envelope.seq).padStart(5);
  const type = envelope.type.padEnd(23);
  return `${seq}  ${iso(envelope.recordedAt.getTime())}  ${type}  fence ${String(envelope.fence).padEnd(4)} ${summarize(envelope)}\n`;
}

/** Wait `ms`; true when `signal` aborted meanwhile. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<boolean> {
  if (signal?.aborted === true) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve(false);
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      resolve(true);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
