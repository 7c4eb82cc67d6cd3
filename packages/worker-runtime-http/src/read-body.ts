/**
 * Reading a request body under a byte limit, without ever holding more than the limit: a
 * declared `Content-Length` over it is refused before a byte is read, and a body without one
 * (chunked) is counted while it streams and cut off as soon as it passes the limit. Node-only.
 */
import type { IncomingMessage } from 'node:http';

/** What reading the body gave. */
export type BodyRead = { kind: 'ok'; body: Buffer } | { kind: 'too-large' } | { kind: 'aborted' };

/** True when the declared length alone is over `limit` (the body is then never read). */
export function declaredTooLarge(request: IncomingMessage, limit: number): boolean {
  const declared = request.headers['content-length'];
  return declared !== undefined && Number(declared) > limit;
}

/** Read the whole body, or stop reading at the first byte past `limit`. */
export function readBody(request: IncomingMessage, limit: number): Promise<BodyRead> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    const settle = (result: BodyRead) => {
      request.off('data', onData);
      request.off('end', onEnd);
      request.off('error', onError);
      request.off('aborted', onError);
      resolve(result);
    };
    const onData = (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > limit) {
        // Stop the flow; the caller answers 413 and closes the connection.
        request.pause();
        settle({ kind: 'too-large' });
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => settle({ kind: 'ok', body: Buffer.concat(chunks, bytes) });
    const onError = () => settle({ kind: 'aborted' });
    request.on('data', onData);
    request.on('end', onEnd);
    request.on('error', onError);
    request.on('aborted', onError);
  });
}
