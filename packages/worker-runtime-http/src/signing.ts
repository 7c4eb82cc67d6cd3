/**
 * Request signing (adr/0010): HMAC-SHA256 with the shared secret over the method, the path
 * (with its query), the timestamp, a nonce and the SHA-256 of the body. Node-only.
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** Header carrying the signing time, milliseconds since the epoch. */
export const TIMESTAMP_HEADER = 'x-skein-timestamp';
/** Header carrying a random value, so two identical requests in one millisecond differ. */
export const NONCE_HEADER = 'x-skein-nonce';
/** Header carrying `v1=<hex HMAC>`. */
export const SIGNATURE_HEADER = 'x-skein-signature';

const SCHEME = 'v1';
/** Shortest secret accepted: as long as the HMAC-SHA256 output. */
export const MIN_SECRET_BYTES = 32;

/** What a signature covers. */
export interface SignedParts {
  method: string;
  /** The request target as sent: path and query, e.g. `/v1/executions/order-42`. */
  path: string;
  timestamp: string;
  nonce: string;
  body: Uint8Array;
}

/** The canonical text that is MACed; one field per line, so no field can run into the next. */
function canonical(parts: SignedParts): string {
  const bodyHash = createHash('sha256').update(parts.body).digest('hex');
  return [SCHEME, parts.method.toUpperCase(), parts.path, parts.timestamp, parts.nonce, bodyHash].join('\n');
}

/** The raw HMAC of `parts` under `secret`. */
function mac(secret: Uint8Array, parts: SignedParts): Buffer {
  return createHmac('sha256', secret).update(canonical(parts)).digest();
}

/** The three signing headers for a request. */
export function signRequest(
  secret: Uint8Array,
  parts: Omit<SignedParts, 'timestamp' | 'nonce'>,
  now: number,
): Record<string, string> {
  const timestamp = String(Math.trunc(now));
  const nonce = randomBytes(16).toString('hex');
  const signature = mac(secret, { ...parts, timestamp, nonce }).toString('hex');
  return {
    [TIMESTAMP_HEADER]: timestamp,
    [NONCE_HEADER]: nonce,
    [SIGNATURE_HEADER]: `${SCHEME}=${signature}`,
  };
}

/** The MAC a `v1=<hex>` header carries, or null when it is not of that form. */
export function parseSignature(header: string): Buffer | null {
  const match = /^v1=([0-9a-f]{64})$/.exec(header);
  return match === null ? null : Buffer.from(match[1]!, 'hex');
}

/** True when `given` is the MAC of `parts`; compared in constant time. */
export function verifySignature(secret: Uint8Array, parts: SignedParts, given: Buffer): boolean {
  const expected = mac(secret, parts);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** The secret as bytes (a string is taken as UTF-8). */
export function secretBytes(secret: string | Uint8Array): Uint8Array {
  return typeof secret === 'string' ? Buffer.from(secret, 'utf8') : secret;
}
