/**
 * `fanOutStoreSuite`: the fan-out tables (docs/fan-out.md, DESIGN §10). Creation and dispatch
 * (F1, F2, placement) in `fan-out-creation-cases.ts`, batched seeds in
 * `fan-out-seed-batch-cases.ts`; claims, the attempt guard, retries and
 * recovery (F3–F6, F8) in `fan-out-work-cases.ts`.
 */
import { fanOutCreationCases } from './fan-out-creation-cases.js';
import type { FanOutStoreSuiteOptions } from './fan-out-fixtures.js';
import { fanOutSeedBatchCases } from './fan-out-seed-batch-cases.js';
import { fanOutWorkCases } from './fan-out-work-cases.js';

export type { FanOutStoreSuiteOptions, FanOutStores } from './fan-out-fixtures.js';

/**
 * Register the fan-out-store conformance tests in the current vitest file.
 * @example
 * fanOutStoreSuite({ name: 'memory', open: () => openMemoryStores() });
 */
export function fanOutStoreSuite(options: FanOutStoreSuiteOptions): void {
  fanOutCreationCases(options);
  fanOutSeedBatchCases(options);
  fanOutWorkCases(options);
}
