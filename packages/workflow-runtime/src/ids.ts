/**
 * Identifiers: ULIDs from a monotonic factory. Within one millisecond a ULID costs ~1 µs (the
 * factory increments the last one); in a new millisecond the factory draws 16 random values,
 * and with its default source each is its own `crypto.getRandomValues` call (~20 µs a ULID
 * here, i.e. ~40 µs of every step). So the factory draws from a pool of random bytes that one
 * `getRandomValues` call refills every 4 KiB.
 */
import { webcrypto } from 'node:crypto';
import { monotonicFactory } from 'ulid';

const POOL_BYTES = 4096;
const pool = new Uint8Array(POOL_BYTES);
let used = POOL_BYTES;

/** A uniform value in [0, 1) in steps of 1/256, from the pool (what the factory asks of a PRNG). */
function pooledRandom(): number {
  if (used === POOL_BYTES) {
    webcrypto.getRandomValues(pool);
    used = 0;
  }
  const byte = pool[used]!;
  used += 1;
  return byte / 256;
}

const next = monotonicFactory(pooledRandom);

/** A new ULID; strictly increasing within this process. */
export function newId(): string {
  return next();
}

/** Longest execution id the runtime accepts. */
export const MAX_EXECUTION_ID_LENGTH = 255;
