/**
 * A batch's publishes leave in a few socket writes, not one per message (adr/0089).
 * rabbitmq-client writes each publish's frames (method, header, body) with the socket corked
 * and uncorks at once: one `writev` per message, and on loopback each one wakes the broker.
 * With the socket corked around the whole batch, the frames pile up in the socket's buffer
 * and leave together. The socket is uncorked whenever its buffer passes half its high-water
 * mark: past the mark the client's encoder waits for `drain`, which a corked socket does not
 * emit until it is uncorked, so the rest of the batch would wait for the final uncork.
 */
import { Socket } from 'node:net';
import type { Connection } from 'rabbitmq-client';

/**
 * The connection's current socket: rabbitmq-client 5 holds it as `_socket` and replaces it on
 * every reconnection. Undefined when it is not a writable socket (then nothing is corked).
 */
function socketOf(connection: Connection): Socket | undefined {
  const socket: unknown = (connection as unknown as { _socket?: unknown })._socket;
  return socket instanceof Socket && socket.writable ? socket : undefined;
}

/**
 * Call `send` on each item, in order, with the connection's socket corked, and return what
 * each call returned. The calls start their writes synchronously (an open channel writes its
 * frames before `send` returns); the socket is uncorked before this returns, so nothing waits
 * past it.
 */
export function corked<T, R>(connection: Connection, items: readonly T[], send: (item: T) => R): R[] {
  const socket = socketOf(connection);
  if (socket === undefined) return items.map(send);
  const flushAt = socket.writableHighWaterMark / 2;
  const results: R[] = [];
  socket.cork();
  try {
    for (const item of items) {
      results.push(send(item));
      if (socket.writableLength >= flushAt) {
        socket.uncork();
        socket.cork();
      }
    }
  } finally {
    socket.uncork();
  }
  return results;
}
