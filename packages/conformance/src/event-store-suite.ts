/** `eventStoreSuite`: the log invariants L1–L4 and L6 (docs/architecture.md#invariants), for any `EventStore`. */
import { describe } from 'vitest';
import { batchCases } from './batch-cases.js';
import { fenceCases } from './fence-cases.js';
import type { SuiteOptions } from './harness.js';
import { listingCases } from './listing-cases.js';
import { logCases } from './log-cases.js';
import { payloadCases } from './payload-cases.js';

/** Cases a store cannot support; each flag's value is the reason, shown in the skipped test's title. */
export interface EventStoreUnsupported {
  /** U+0000 inside execution ids and payload text (PostgreSQL `text` refuses it). */
  nulInText?: string;
}

/** Options of {@link eventStoreSuite}. */
export interface EventStoreSuiteOptions extends SuiteOptions<'events'> {
  /** The per-event payload limit the store was opened with (default: 1 MiB). */
  maxPayloadBytes?: number;
  /** Named capability gaps, each with a reason (default: none). */
  unsupported?: EventStoreUnsupported;
}

/**
 * Register the event-store conformance tests in the current vitest file.
 * @example
 * eventStoreSuite({ name: 'memory', open: () => openMemoryStores() });
 */
export function eventStoreSuite(options: EventStoreSuiteOptions): void {
  describe(`${options.name}: event store`, () => {
    describe('L1, L2, L6: the log', () => logCases(options));
    describe('L3: fences', () => fenceCases(options));
    describe('L4: group commit outcomes', () => batchCases(options));
    describe('execution index', () => listingCases(options));
    describe('L7 and payloads', () => payloadCases(options));
  });
}
