/**
 * Updates wait in the signal inbox until a run applies them (adr/0049): an update named `add`
 * with id `u1` is the inbox row `$update:u1` named `$update:add`. The prefix keeps them apart
 * from signals: no declared signal name, no `waitForSignal` name and no signal id may start
 * with it.
 */
import { InvalidInputError } from './errors.js';

/** The prefix of the inbox names and ids of updates. */
export const UPDATE_PREFIX = '$update:';

/** The inbox id an update is kept under. */
export function updateInboxId(updateId: string): string {
  return `${UPDATE_PREFIX}${updateId}`;
}

/** The inbox name the updates named `name` are kept under. */
export function updateInboxName(name: string): string {
  return `${UPDATE_PREFIX}${name}`;
}

/** True for a signal name or id that only updates may have. */
export function isReservedForUpdates(text: string): boolean {
  return typeof text === 'string' && text.startsWith(UPDATE_PREFIX);
}

/** Throw `InvalidInputError` (at `where`, field `path`) when `text` starts with the updates' prefix. */
export function refuseReserved(text: string, where: string, path: string): void {
  if (!isReservedForUpdates(text)) return;
  throw new InvalidInputError(where, [
    {
      path,
      message: `must not start with "${UPDATE_PREFIX}" (reserved for updates), got ${JSON.stringify(text)}`,
    },
  ]);
}
