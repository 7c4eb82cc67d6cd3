/**
 * Raw TCP clients for the exhaustion tests: what anyone who reaches a worker's port can send
 * without the secret (signing headers of the right form, a made-up signature), byte by byte.
 */
import { randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';

/** A raw connection to the worker, with everything it received and when it closed. */
export interface RawConnection {
  socket: Socket;
  /** Everything received so far. */
  received(): string;
  /** Resolves once the server answered a status line (the text so far). */
  answered: Promise<string>;
  /** Resolves once the connection is closed, with ms since it was opened. */
  closed: Promise<number>;
}

/** Open a TCP connection to `url`; errors (resets) count as the close they cause. */
export function open(url: URL): RawConnection {
  const opened = Date.now();
  const socket = connect(Number(url.port), url.hostname);
  let text = '';
  let onAnswer: (text: string) => void = () => undefined;
  const answered = new Promise<string>((resolve) => {
    onAnswer = resolve;
  });
  socket.on('data', (chunk: Buffer) => {
    text += chunk.toString('latin1');
    if (text.includes('\r\n\r\n')) onAnswer(text);
  });
  socket.on('error', () => undefined);
  const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now() - opened)));
  return { socket, received: () => text, answered, closed };
}

/** Signing headers of the right form under no secret: they pass the header checks, not the signature. */
export function forgedSigning(): Record<string, string> {
  return {
    'x-skein-timestamp': String(Date.now()),
    'x-skein-nonce': randomBytes(16).toString('hex'),
    'x-skein-signature': `v1=${randomBytes(32).toString('hex')}`,
  };
}

/** The head of a request: request line and headers, ending in the blank line. */
export function head(method: string, path: string, headers: Record<string, string | number>): string {
  const lines = Object.entries({ host: '127.0.0.1', ...headers }).map(([name, value]) => `${name}: ${value}`);
  return `${method} ${path} HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n`;
}

/** A chunked POST head with forged signing headers. */
export function chunkedPost(path: string): string {
  return head('POST', path, {
    ...forgedSigning(),
    'content-type': 'application/json',
    'transfer-encoding': 'chunked',
  });
}

/** `bytes` body bytes as that many 1-byte HTTP chunks (6 bytes each on the wire). */
export function oneByteChunks(bytes: number): Buffer {
  return Buffer.from('1\r\nx\r\n'.repeat(bytes), 'latin1');
}

/** The last chunk of a chunked body. */
export const LAST_CHUNK = '0\r\n\r\n';

/** The status code of an answer's status line, or 0 when there is none. */
export function statusOf(text: string): number {
  const match = /^HTTP\/1\.1 (\d{3})/.exec(text);
  return match === null ? 0 : Number(match[1]);
}

/** Resolve with `promise`, or reject naming `what` after `ms` (the bound a test asserts). */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** The heap and buffer memory of this process, in bytes. */
export function heldMemory(): number {
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.arrayBuffers;
}
