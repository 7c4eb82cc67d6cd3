/** Identifiers: ULIDs from a monotonic factory (~1 µs a call, against ~44 µs for plain `ulid()`). */
import { monotonicFactory } from 'ulid';

const next = monotonicFactory();

/** A new ULID; strictly increasing within this process. */
export function newId(): string {
  return next();
}

/** Longest execution id the runtime accepts. */
export const MAX_EXECUTION_ID_LENGTH = 255;
