/** A clock tests move by hand, so sleeps and retries happen without waiting. */

import { parseWith } from '@skein/workflow-runtime/internal';
import { z } from 'zod';

const instant = z.number().int().nonnegative();

/** 2023-11-14T22:13:20Z: a fixed start, so runs that share a clock start are reproducible. */
export const DEFAULT_CLOCK_START = 1_700_000_000_000;

/**
 * A virtual clock in milliseconds since the epoch. Time moves only by `advance` and `set`.
 * @example
 * const clock = new VirtualClock();
 * const runtime = createRuntime({ stores, workflows, clock: () => clock.now() });
 * clock.advance(60_000); // a one-minute sleep is now due
 */
export class VirtualClock {
  private current: number;

  /** @param start the first reading (default: `DEFAULT_CLOCK_START`, 1_700_000_000_000). */
  constructor(start: number = DEFAULT_CLOCK_START) {
    this.current = parseWith(instant, start, 'VirtualClock start', 'start');
  }

  /** The current reading. */
  now(): number {
    return this.current;
  }

  /** Move forward by `ms` (>= 0); returns the new reading. */
  advance(ms: number): number {
    this.current += parseWith(instant, ms, 'VirtualClock.advance', 'ms');
    return this.current;
  }

  /** Jump to `ms`; time never goes back, so `ms` must not be before the current reading. */
  set(ms: number): number {
    const at = parseWith(instant, ms, 'VirtualClock.set', 'ms');
    if (at < this.current)
      throw new RangeError(`VirtualClock.set(${at}): before the current reading ${this.current}`);
    this.current = at;
    return this.current;
  }

  /** A function to pass as the runtime's `clock` option. */
  get clock(): () => number {
    return () => this.current;
  }
}
