/** Per-invocation limits: what one call of a guest may use before it is stopped. */
import { parseWith } from '@skein/workflow-runtime/internal';
import { z } from 'zod';
import { WASM_PAGE_BYTES } from './instrument.js';

/** The limits of one invocation. Every field is optional; see {@link DEFAULT_LIMITS}. */
export interface SandboxLimits {
  /** Bytes of linear memory, over all memories of the component, initial and grown (default: 64 MiB). */
  memoryBytes?: number;
  /** Elements of each function table; a table's maximum is patched down to this (default: 65,536). */
  tableElements?: number;
  /** Core instances one invocation may create (default: 64; a QuickJS evaluator needs 13). */
  instances?: number;
  /** Fuel: one unit per function entry, loop iteration and return of guest code (default: 100,000,000). */
  fuel?: number;
  /** Wall-clock budget; past it the worker thread is terminated and replaced (default: 5,000 ms). */
  timeoutMs?: number;
  /** Messages the guest may log (default: 100). */
  maxLogs?: number;
  /** UTF-8 bytes the guest may log, all messages together (default: 16,384). */
  maxLogBytes?: number;
}

/** The limits of an invocation that names none. */
export const DEFAULT_LIMITS: Readonly<Required<SandboxLimits>> = Object.freeze({
  memoryBytes: 64 << 20,
  tableElements: 65_536,
  instances: 64,
  fuel: 100_000_000,
  timeoutMs: 5_000,
  maxLogs: 100,
  maxLogBytes: 16_384,
});

const count = (max: number) => z.number().int().min(0).max(max);

const limitsSchema = z
  .object({
    memoryBytes: z
      .number()
      .int()
      .min(WASM_PAGE_BYTES)
      .max(4 * 2 ** 30 - WASM_PAGE_BYTES),
    tableElements: count(10_000_000),
    instances: count(10_000).min(1),
    fuel: count(Number.MAX_SAFE_INTEGER).min(1),
    timeoutMs: count(2 ** 31 - 1).min(1),
    maxLogs: count(Number.MAX_SAFE_INTEGER),
    maxLogBytes: count(Number.MAX_SAFE_INTEGER),
  })
  .partial()
  .strict();

/** Validate `limits` and fill in the defaults; throws `InvalidInputError` naming the bad field. */
export function resolveLimits(limits: SandboxLimits | undefined): Required<SandboxLimits> {
  const given = parseWith(limitsSchema, limits ?? {}, 'sandbox limits', 'limits');
  const set = Object.entries(given).filter(([, value]) => value !== undefined);
  return { ...DEFAULT_LIMITS, ...Object.fromEntries(set) };
}
