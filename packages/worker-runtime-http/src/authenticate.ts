/**
 * Authentication of a request (adr/0010): the signing headers, the timestamp within the skew
 * bound, the HMAC in constant time, and no replay of a signature seen within the window.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { ReplayCache } from './replay-cache.js';
import {
  NONCE_HEADER,
  parseSignature,
  SIGNATURE_HEADER,
  type SignedParts,
  TIMESTAMP_HEADER,
  verifySignature,
} from './signing.js';

/** The signing headers of a request, checked for form and freshness before its body is read. */
export interface Claim {
  timestamp: string;
  nonce: string;
  signature: Buffer;
  /** When the signature leaves the skew window, ms since the epoch. */
  expiresAt: number;
}

/** Why a request was refused (logged, never sent: the answer is a bare 401). */
export type Refusal =
  | 'missing signing headers'
  | 'malformed signature'
  | 'malformed timestamp'
  | 'timestamp outside the clock-skew bound'
  | 'signature mismatch'
  | 'replayed request';

const single = (value: string | string[] | undefined): string | undefined =>
  typeof value === 'string' ? value : undefined;

/** Checks claims and signatures of requests for one worker. */
export class Authenticator {
  private readonly replays: ReplayCache;

  constructor(
    private readonly secret: Uint8Array,
    private readonly skewMs: number,
    maxSeen: number,
    private readonly clock: () => number,
  ) {
    this.replays = new ReplayCache(maxSeen);
  }

  /** The request's claim, or why it is refused; needs only the headers. */
  claim(headers: IncomingHttpHeaders): Claim | Refusal {
    const timestamp = single(headers[TIMESTAMP_HEADER]);
    const nonce = single(headers[NONCE_HEADER]);
    const header = single(headers[SIGNATURE_HEADER]);
    if (timestamp === undefined || nonce === undefined || header === undefined)
      return 'missing signing headers';
    const signature = parseSignature(header);
    if (signature === null || !/^[0-9a-f]{16,64}$/.test(nonce)) return 'malformed signature';
    if (!/^\d{1,16}$/.test(timestamp)) return 'malformed timestamp';
    const at = Number(timestamp);
    if (Math.abs(this.clock() - at) > this.skewMs) return 'timestamp outside the clock-skew bound';
    return { timestamp, nonce, signature, expiresAt: at + this.skewMs };
  }

  /**
   * Verify the signature over the request, then remember it; a signature seen before is a
   * replay. `busy` when the replay cache is full of live signatures.
   */
  verify(claim: Claim, request: Omit<SignedParts, 'timestamp' | 'nonce'>): 'ok' | 'busy' | Refusal {
    const parts = { ...request, timestamp: claim.timestamp, nonce: claim.nonce };
    if (!verifySignature(this.secret, parts, claim.signature)) return 'signature mismatch';
    const admission = this.replays.admit(claim.signature.toString('hex'), claim.expiresAt, this.clock());
    if (admission === 'replayed') return 'replayed request';
    return admission === 'full' ? 'busy' : 'ok';
  }
}
