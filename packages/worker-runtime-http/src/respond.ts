/** Writing answers. Node-only. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { WireError } from './wire.js';

/** Answer `status` with a JSON body already encoded as text. */
export function sendText(response: ServerResponse, status: number, text: string): void {
  response.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text, 'utf8'),
    'cache-control': 'no-store',
  });
  response.end(text);
}

/** Answer `status` with an error body. */
export function sendError(response: ServerResponse, status: number, body: WireError): void {
  sendText(response, status, JSON.stringify(body));
}

/**
 * Answer with an error and close the connection without reading the rest of the request
 * body (413, or a refusal before the body was read). The socket is closed once the answer is
 * flushed, so an unread body can never be buffered or parsed as a next request.
 */
export function sendErrorAndClose(
  request: IncomingMessage,
  response: ServerResponse,
  status: number,
  body: WireError,
): void {
  response.shouldKeepAlive = false;
  response.setHeader('connection', 'close');
  response.once('finish', () => {
    // Half-close first so the client reads the answer; then drop whatever it still sends.
    request.socket.end();
    setTimeout(() => request.socket.destroy(), 1_000).unref();
  });
  sendError(response, status, body);
}
