/** Opaque paging cursors: the last execution id of a page, base64url-encoded. */

/** Encode the last id of a page as a cursor. */
export function encodeCursor(lastId: string): string {
  return Buffer.from(lastId, 'utf8').toString('base64url');
}

/** Decode a cursor from {@link encodeCursor}. */
export function decodeCursor(cursor: string): string {
  return Buffer.from(cursor, 'base64url').toString('utf8');
}
