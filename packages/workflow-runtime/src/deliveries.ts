/**
 * Outcomes in log order (adr/0031). A body that runs branches at once (`Promise.all`,
 * `Promise.race` over steps, sleeps, signal waits, children) decides what it calls next by the
 * order in which its calls settle. So a run hands each outcome to the body in the order of the
 * event that settled it (`CallRecord.settledSeq`), one per turn of the event loop (the body's
 * reactions to one outcome, and the calls they make, all happen before the next one), live and
 * on replay alike. A replay then makes every call at the position the first run gave it.
 *
 * Outcomes the loaded log already holds are "expected": a later one, and any new outcome of
 * this run, waits until every earlier expected one has been handed over.
 */

import type { ExecutionState } from './fold.js';

interface Pending {
  key: number;
  hand: () => void;
}

/** The ordered hand-over of one run; see the module comment. */
export class Deliveries {
  /** The outcomes the loaded log holds that the body has not been handed yet, by settle seq. */
  private readonly expected: { key: number; position: number }[];
  private readonly queue: Pending[] = [];
  private scheduled = false;
  private stopped = false;

  constructor(
    state: ExecutionState,
    /** Called when the queue is empty or waits for an expected outcome nobody asked for. */
    private readonly onIdle: () => void,
  ) {
    this.expected = [];
    for (const call of state.calls) {
      if (call?.settledSeq !== undefined)
        this.expected.push({ key: call.settledSeq, position: call.position });
    }
    this.expected.sort((a, b) => a.key - b.key);
  }

  /**
   * The position of the expected outcome the hand-over waits for when the body has not made
   * that call (on replay only a code change does that), else undefined.
   */
  get stalledAt(): number | undefined {
    const first = this.expected[0];
    if (first === undefined || this.queue.some((pending) => pending.key <= first.key)) return undefined;
    return first.position;
  }

  /** True while an outcome can be handed over. */
  get ready(): boolean {
    return this.queue.length > 0 && this.stalledAt === undefined;
  }

  /**
   * Hand `outcome` (a call's promise) to the body in its turn. `keyOf` gives, once the call has
   * settled, the seq of the event that settled it; undefined (the call threw before recording
   * anything: a refusal, `CancelledError`, a broken log) hands it over at once.
   */
  order<T>(outcome: Promise<T>, keyOf: (failed: boolean) => number | undefined): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      outcome.then(
        (value) => this.enqueue(keyOf(false), () => resolve(value)),
        (error: unknown) => this.enqueue(keyOf(true), () => reject(error)),
      );
    });
  }

  /**
   * The expected outcome at `position` is no call's but an update's, which the run applied on
   * replay at its quiet point (adr/0049): drop it and hand over what comes after it.
   */
  pass(position: number): void {
    const at = this.expected.findIndex((entry) => entry.position === position);
    if (at >= 0) this.expected.splice(at, 1);
    if (this.queue.length > 0) this.schedule();
    else this.onIdle();
  }

  /** Hand nothing more over: the run has ended or suspended. */
  stop(): void {
    this.stopped = true;
    this.queue.length = 0;
  }

  /** True when nothing waits to be handed over and no expected outcome is left. */
  get idle(): boolean {
    return this.queue.length === 0 && this.expected.length === 0;
  }

  /** Hand over again after `stop`: a resident run resumes (adr/0068). */
  restart(): void {
    this.stopped = false;
  }

  private enqueue(key: number | undefined, hand: () => void): void {
    if (this.stopped) return;
    if (key === undefined) {
      hand();
      return;
    }
    this.queue.push({ key, hand });
    this.schedule();
  }

  private schedule(): void {
    if (this.scheduled || this.stopped) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.handNext();
    });
  }

  /** Hand over the outcome with the smallest key, unless an earlier expected one is not asked for yet. */
  private handNext(): void {
    if (this.stopped) return;
    let next = 0;
    for (let i = 1; i < this.queue.length; i++) if (this.queue[i]!.key < this.queue[next]!.key) next = i;
    const head = this.queue[next];
    const first = this.expected[0];
    if (head === undefined || (first !== undefined && first.key < head.key)) {
      this.onIdle();
      return;
    }
    this.queue.splice(next, 1);
    if (first?.key === head.key) this.expected.shift();
    head.hand();
    if (this.queue.length > 0) this.schedule();
    else this.onIdle();
  }
}
