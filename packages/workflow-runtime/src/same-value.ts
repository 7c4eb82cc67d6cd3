/** Whether two recorded values are the same, whatever the order of their objects' keys. */

/** Compare two texts of the codec (`encode`) as JSON values, objects by key rather than by key order. */
export function sameRecordedValue(a: string, b: string): boolean {
  return same(JSON.parse(a), JSON.parse(b));
}

function same(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => same(x, b[i]));
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  const keys = Object.keys(left);
  if (keys.length !== Object.keys(right).length) return false;
  return keys.every((key) => Object.hasOwn(right, key) && same(left[key], right[key]));
}
