/**
 * For queue stores (SPI side): a queue item as a SQL store reads it back, and the mapping to
 * the `QueueItem` and `QueueEntry` the SPI answers with (absent optional fields, not nulls).
 */
import type { QueueEntry, QueueItem, QueueItemState } from './queue-spi.js';

/** A row of a store's queue-items table, columns aliased to these names. */
export type QueueItemRow = Omit<QueueItem, 'deduplicationId'> & {
  deduplicationId: string | null;
  state: QueueItemState;
  owner: string | null;
  expiresAt: number | null;
};

/** The queued item of a row. */
export function queueItemOf(row: QueueItemRow): QueueItem {
  const item: QueueItem = {
    executionId: row.executionId,
    queue: row.queue,
    partitionKey: row.partitionKey,
    priority: row.priority,
    workflow: row.workflow,
    version: row.version,
    input: row.input,
    enqueuedAt: row.enqueuedAt,
    availableAt: row.availableAt,
  };
  if (row.deduplicationId !== null) item.deduplicationId = row.deduplicationId;
  return item;
}

/** The item of a row with its state, owner and slot expiry. */
export function queueEntryOf(row: QueueItemRow): QueueEntry {
  const entry: QueueEntry = { ...queueItemOf(row), state: row.state };
  if (row.owner !== null) entry.owner = row.owner;
  if (row.expiresAt !== null) entry.expiresAt = row.expiresAt;
  return entry;
}
