/** Opaque paging cursors: the last execution id of a page, base64url-encoded. */
import { InvalidInputError } from './errors.js';

/** Encode the last id of a page as a cursor. */
export function encodeCursor(lastId: string): string {
  return Buffer.from(lastId, 'utf8').toString('base64url');
}

/**
 * Decode a cursor from {@link encodeCursor}. Throws `InvalidInputError` naming `query.cursor`
 * for text no page could have returned (not base64url, or not the encoding of any text), so a
 * mangled cursor is refused instead of silently restarting the listing.
 */
export function decodeCursor(cursor: string): string {
  const lastId = typeof cursor === 'string' ? Buffer.from(cursor, 'base64url').toString('utf8') : undefined;
  if (lastId === undefined || encodeCursor(lastId) !== cursor) {
    throw new InvalidInputError('listExecutions query', [
      { path: 'query.cursor', message: 'is not a cursor that a page returned' },
    ]);
  }
  return lastId;
}
