/**
 * `ctx.historySize()`: how long this execution's log is, in events and in bytes of encoded
 * payloads, so a body that loops can decide when to `ctx.continueAsNew`. The answer is a
 * positional call recorded as `STEP_COMPLETED` (`kind: 'history'`), so a replay gets the
 * values the first run saw at that point of the log, whatever the log holds by then.
 */
import type { HistorySize } from './context-api.js';
import type { RunInternals } from './run-internals.js';
import type { EventStore } from './spi.js';

/** Events read per page while counting bytes. */
const PAGE = 500;

/**
 * Counts the bytes of one run's durable log incrementally: the first measure reads the log
 * once, later ones only what was appended since.
 */
export class HistoryCounter {
  private counted = 0;
  private bytes = 0;

  constructor(
    private readonly events: EventStore,
    private readonly executionId: string,
  ) {}

  /** Length and bytes of the log up to and including `lastSeq`. */
  async measure(lastSeq: number): Promise<HistorySize> {
    while (this.counted <= lastSeq) {
      const page = await this.events.read(
        this.executionId,
        this.counted,
        Math.min(PAGE, lastSeq + 1 - this.counted),
      );
      if (page.length === 0) break;
      for (const event of page) this.bytes += Buffer.byteLength(event.payload, 'utf8');
      this.counted += page.length;
    }
    return { length: this.counted, bytes: this.bytes };
  }
}

/** `ctx.historySize()`; see the module comment. */
export async function historySize(run: RunInternals, counter: HistoryCounter): Promise<HistorySize> {
  const { position, record } = run.next('history', 'historySize');
  if (record?.status === 'completed') return record.output as HistorySize;
  const size = await run.track(async () => {
    // Measured on the durable log: what is recorded so far is flushed first.
    await run.writer.flush();
    return counter.measure(run.state().sequence);
  });
  run.writer.record(
    'STEP_COMPLETED',
    { position, name: 'historySize', kind: 'history', output: size },
    'ctx.historySize()',
  );
  return size;
}
