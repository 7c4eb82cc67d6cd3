/**
 * Reading a request body under a byte limit, holding only about the bytes received: a
 * declared `Content-Length` over the limit is refused before a byte is read; otherwise the
 * body is copied into one buffer that doubles as it fills (from 16 KiB), never past the
 * declared length or the limit, and a body without a declared length (chunked) is cut off
 * as soon as it passes the limit. Every HTTP chunk is copied in and dropped at once, so a
 * body sent in 1-byte chunks costs its bytes, not a `Buffer` object (and a retained socket
 * read) per chunk, and a declared length costs nothing until the bytes arrive. Node-only.
 */
import type { IncomingMessage } from 'node:http';

/** What reading the body gave. */
export type BodyRead = { kind: 'ok'; body: Buffer } | { kind: 'too-large' } | { kind: 'aborted' };

/** First capacity of a body of unknown length; it doubles from there, up to the limit. */
const FIRST_CAPACITY = 16 * 1024;

/** True when the declared length alone is over `limit` (the body is then never read). */
export function declaredTooLarge(request: IncomingMessage, limit: number): boolean {
  const declared = request.headers['content-length'];
  return declared !== undefined && Number(declared) > limit;
}

/** The declared `Content-Length`, or undefined when there is none (chunked) or it is malformed. */
function declaredLength(request: IncomingMessage): number | undefined {
  const declared = request.headers['content-length'];
  if (declared === undefined || !/^\d{1,16}$/.test(declared)) return undefined;
  return Number(declared);
}

/** Bytes copied into one buffer that grows by doubling, never past `limit`. */
class BodyBuffer {
  private buffer: Buffer;
  length = 0;

  constructor(
    capacity: number,
    private readonly limit: number,
  ) {
    this.buffer = Buffer.allocUnsafe(capacity);
  }

  /** Copy `chunk` in; false (nothing copied) when it would pass the limit. */
  add(chunk: Buffer): boolean {
    const needed = this.length + chunk.length;
    if (needed > this.limit) return false;
    if (needed > this.buffer.length) {
      let capacity = Math.max(this.buffer.length * 2, FIRST_CAPACITY);
      while (capacity < needed) capacity *= 2;
      const grown = Buffer.allocUnsafe(Math.min(capacity, this.limit));
      this.buffer.copy(grown, 0, 0, this.length);
      this.buffer = grown;
    }
    chunk.copy(this.buffer, this.length);
    this.length = needed;
    return true;
  }

  /** The bytes received (a view, no copy). */
  bytes(): Buffer {
    return this.buffer.subarray(0, this.length);
  }
}

/** Read the whole body, or stop reading at the first byte past `limit`. */
export function readBody(request: IncomingMessage, limit: number): Promise<BodyRead> {
  return new Promise((resolve) => {
    const declared = declaredLength(request);
    const most = declared === undefined ? limit : Math.min(declared, limit);
    const body = new BodyBuffer(Math.min(FIRST_CAPACITY, most), most);
    const settle = (result: BodyRead) => {
      request.off('data', onData);
      request.off('end', onEnd);
      request.off('error', onError);
      request.off('aborted', onError);
      resolve(result);
    };
    const onData = (chunk: Buffer) => {
      if (body.add(chunk)) return;
      // Stop the flow; the caller answers 413 and closes the connection.
      request.pause();
      settle({ kind: 'too-large' });
    };
    const onEnd = () => settle({ kind: 'ok', body: body.bytes() });
    const onError = () => settle({ kind: 'aborted' });
    request.on('data', onData);
    request.on('end', onEnd);
    request.on('error', onError);
    request.on('aborted', onError);
  });
}
