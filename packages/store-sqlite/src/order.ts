/** Ordering that agrees with SQLite's BINARY collation on UTF-8 text. */

/**
 * Compare by Unicode code point, as SQLite compares UTF-8 bytes. `<` on JS strings compares
 * UTF-16 units instead, which puts U+E000–U+FFFF after astral characters; merged pages must
 * follow the database's order or the cursor would skip rows.
 */
export function compareCodePoints(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i += 1) {
    const x = a.codePointAt(i)!;
    const y = b.codePointAt(i)!;
    if (x !== y) return x - y;
    if (x > 0xffff) i += 1;
  }
  return a.length - b.length;
}
