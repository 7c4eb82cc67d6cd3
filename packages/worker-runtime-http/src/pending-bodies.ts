/**
 * The bound on request bodies being received at once. A body is read before its signature
 * can be checked, so anyone who reaches the port can send one; this bound, times the body
 * limit, is the most memory unverified bodies can hold (default: 32 × 1 MiB). Node-only.
 */
import type { IncomingMessage } from 'node:http';

/** Counts the bodies being read; refuses a new one when `max` are. */
export class PendingBodies {
  private count = 0;

  /** @param max bodies read at once; one more is refused. */
  constructor(private readonly max: number) {}

  /** Take a slot for one body; false when all are taken (the request is then refused unread). */
  admit(): boolean {
    if (this.count >= this.max) return false;
    this.count += 1;
    return true;
  }

  /** Give a slot back once its body is read (or reading it failed). */
  release(): void {
    this.count -= 1;
  }

  /** Bodies being read now. */
  get size(): number {
    return this.count;
  }
}

/** True when the request carries a body at all (a declared length above 0, or chunked). */
export function hasBody(request: IncomingMessage): boolean {
  const length = request.headers['content-length'];
  if (length !== undefined) return length !== '0';
  return request.headers['transfer-encoding'] !== undefined;
}
