/**
 * A named statement that writes and returns no rows (the step append, the status move), sent
 * through `pg.Client` as a custom submittable: Parse (first time on a connection only), Bind,
 * Execute and Sync encoded into one buffer and written at once; the answer is the row count
 * from the command tag. `pg.Query` does more per call (clones its config, builds a `Result`,
 * asks the server to describe the portal, writes each message on its own behind cork), which
 * measured ~40 µs of JavaScript per step on this path (see `adr/0018-postgres-step-append.md`).
 *
 * Parameters travel in text format, as `pg.Query` sends them: strings as they are, numbers in
 * decimal, null as SQL NULL. Anything else is refused before a byte is written.
 */
import type { Connection } from 'pg';
import type { Query } from './database.js';

/** What a write statement's caller learns: the error, or how many rows the statement wrote. */
export type WriteOutcome = (error: Error | undefined, rowCount: number) => void;

/**
 * The parts of `pg.Connection` a write statement uses. None is public API (none is in
 * @types/pg's `Connection`), so `package.json` pins pg's minor version and
 * `test/pg-internals.test.ts` fails when one of them goes or changes meaning.
 */
interface ProtocolConnection {
  /**
   * The socket. Writing Parse, Bind, Execute and Sync as one buffer saves pg's message-by-message
   * writes behind cork (one `write` call per statement instead of four).
   */
  stream: { write(data: Uint8Array): boolean };
  /**
   * The statements this connection has parsed, by name (pg fills it at ParseComplete). Reading it
   * saves the Parse message, the statement text on the wire and the server's parse, on every use
   * of a name after the first; a name parsed with another text is refused before a byte is sent.
   */
  parsedStatements: Record<string, string | undefined>;
  /**
   * Named statements sent but not yet parsed (pg moves them to `parsedStatements` at
   * ParseComplete). Recording ours there saves a second Parse of the same name from a `pg.Query`
   * pipelined behind it, which the server would refuse as a duplicate prepared statement.
   */
  submittedNamedStatements?: Record<string, string | undefined>;
}

/** One write statement in flight on one client; `pg.Client` calls the `handle*` methods. */
export class WriteStatement {
  readonly name: string;
  readonly text: string;
  private readonly values: readonly unknown[];
  /** Whether any of it went to the server (false: refused before a byte was written). */
  sent = false;
  private rowCount = 0;
  private settled = false;

  constructor(
    query: Query,
    private readonly outcome: WriteOutcome,
  ) {
    this.name = query.name;
    this.text = query.text;
    this.values = query.values;
  }

  /** Called by `pg.Client` when this statement's turn comes; an error returned fails it. */
  submit(connection: Connection): Error | null {
    const protocol = connection as unknown as ProtocolConnection;
    const parsed = protocol.parsedStatements[this.name];
    if (parsed !== undefined && parsed !== this.text) {
      return new Error(`prepared statement "${this.name}" was parsed with another text on this connection`);
    }
    let message: Uint8Array;
    try {
      message = encodeMessages(parsed === undefined ? this.text : undefined, this.name, this.values);
    } catch (error) {
      return error as Error;
    }
    if (parsed === undefined && protocol.submittedNamedStatements !== undefined) {
      protocol.submittedNamedStatements[this.name] = this.text;
    }
    this.sent = true;
    protocol.stream.write(message);
    return null;
  }

  handleCommandComplete(message: { text: string }): void {
    const tag = message.text;
    this.rowCount = Number(tag.slice(tag.lastIndexOf(' ') + 1)) || 0;
  }

  handleReadyForQuery(): void {
    this.settle(undefined);
  }

  handleError(error: Error): void {
    this.settle(error);
  }

  // A write statement returns no rows; were one to, the rows are not this caller's concern.
  handleRowDescription(): void {}
  handleDataRow(): void {}
  handleEmptyQuery(): void {}
  handlePortalSuspended(): void {}
  handleCopyData(): void {}

  /**
   * A COPY FROM STDIN gets no data: it fails, and the failure reaches `outcome`. The server
   * ignores a Sync sent during copy-in (the one already sent), so another follows the CopyFail.
   */
  handleCopyInResponse(connection: Connection): void {
    const copying = connection as unknown as { sendCopyFail(message: string): void; sync(): void };
    copying.sendCopyFail('a write statement sends no COPY data');
    copying.sync();
  }

  private settle(error: Error | undefined): void {
    if (this.settled) return;
    this.settled = true;
    this.outcome(error, this.rowCount);
  }
}

/** Parse (when `text` is given), Bind, Execute and Sync for `name` with `values`, as one buffer. */
export function encodeMessages(
  text: string | undefined,
  name: string,
  values: readonly unknown[],
): Uint8Array {
  // One pass: room for the worst case (3 UTF-8 bytes per UTF-16 unit), then the used part.
  let room = 64 + 2 * name.length * 3 + (text === undefined ? 0 : text.length * 3);
  for (const value of values) room += 4 + (typeof value === 'string' ? value.length * 3 : 24);
  const buffer = Buffer.allocUnsafe(room);
  let at = 0;
  if (text !== undefined) {
    buffer[at++] = 0x50; // 'P'
    const start = at;
    at = cstring(buffer, text, cstring(buffer, name, at + 4));
    at = buffer.writeInt16BE(0, at); // no parameter types: the server infers them
    buffer.writeInt32BE(at - start, start);
  }
  buffer[at++] = 0x42; // 'B'
  const bind = at;
  at += 4;
  buffer[at++] = 0; // the unnamed portal
  at = cstring(buffer, name, at);
  at = buffer.writeInt16BE(0, at); // no format codes: every parameter is text
  at = buffer.writeInt16BE(values.length, at);
  for (const value of values) at = writeParam(buffer, value, at);
  at = buffer.writeInt16BE(0, at); // no result format codes
  buffer.writeInt32BE(at - bind, bind);
  buffer[at++] = 0x45; // 'E'
  at = buffer.writeInt32BE(9, at);
  buffer[at++] = 0; // the unnamed portal
  at = buffer.writeInt32BE(0, at); // every row
  buffer[at++] = 0x53; // 'S'
  at = buffer.writeInt32BE(4, at);
  return buffer.subarray(0, at);
}

function cstring(buffer: Buffer, value: string, at: number): number {
  const end = at + buffer.write(value, at);
  buffer[end] = 0;
  return end + 1;
}

/** One parameter in text format (length, then bytes), or -1 for SQL NULL. */
function writeParam(buffer: Buffer, value: unknown, at: number): number {
  let text: string;
  if (typeof value === 'string') text = value;
  else if (typeof value === 'number' && Number.isFinite(value)) text = String(value);
  else if (value === null || value === undefined) return buffer.writeInt32BE(-1, at);
  else throw new TypeError(`a write statement takes strings, finite numbers and null, not ${String(value)}`);
  const length = buffer.write(text, at + 4);
  buffer.writeInt32BE(length, at);
  return at + 4 + length;
}
