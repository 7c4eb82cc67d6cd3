/**
 * The stores' connections: at most `max` `pg.Client`s, opened when a query finds none idle and
 * kept until `end()`. A query takes the most recently returned client, so under light load one
 * connection (and one warm server backend) serves every statement.
 *
 * Why not `pg.Pool`: per query it schedules its hand-over on `process.nextTick`, emits four
 * events and arms and clears an idle timer. On the step append's path that measured ~10 µs of
 * the ~70 µs a step costs beyond a raw commit (see `adr/0018-postgres-step-append.md`).
 *
 * A connection that breaks (an error event, its end, or a query failing with anything but an
 * error the server reported) is dropped; the next query that needs one opens a new one. A
 * connection given back before pg has its last ReadyForQuery (pg answers a refusal at the
 * ErrorResponse) waits until pg is done with it, so two users' statements never share pg's queue.
 */
import pg from 'pg';
import type { Query } from './database.js';
import { type WriteOutcome, WriteStatement } from './write-statement.js';

interface Waiter {
  resolve(client: pg.Client): void;
  reject(error: unknown): void;
}

/** A fixed-size set of connections; see the module comment. */
export class ConnectionPool {
  private readonly idle: pg.Client[] = [];
  private readonly waiting: Waiter[] = [];
  /** Clients that broke while checked out: dropped when they come back. */
  private readonly broken = new WeakSet<pg.Client>();
  private readonly dropped = new WeakSet<pg.Client>();
  /** Clients given back while pg still waits for their last ReadyForQuery (see `release`). */
  private readonly returning = new Set<pg.Client>();
  /** Clients open or being opened. */
  private opened = 0;
  /** Queries and writes running or waiting for a connection; `drain` waits for none. */
  private busy = 0;
  private readonly drained: (() => void)[] = [];
  private ended = false;

  /**
   * @param config every connection's settings.
   * @param max most connections open at once.
   * @param onError told of errors that no caller sees (a connection breaking while idle).
   */
  constructor(
    private readonly config: pg.ClientConfig,
    private readonly max: number,
    private readonly onError: (error: Error) => void,
  ) {}

  /** Run one statement on a free connection. */
  async query<Row extends pg.QueryResultRow>(query: Query): Promise<pg.QueryResult<Row>> {
    this.busy += 1;
    try {
      const client = this.idle.pop() ?? (await this.acquire());
      try {
        return await client.query<Row>(query);
      } catch (error) {
        if (!refusedOnly(error)) this.broken.add(client);
        throw error;
      } finally {
        this.release(client);
      }
    } finally {
      this.finished();
    }
  }

  /**
   * Run one write statement (see write-statement.ts) on a free connection and tell `outcome`
   * (called back, not a promise: this is the step append's path, where each promise hop
   * costs). The connection goes back before `outcome` runs.
   */
  write(query: Query, outcome: WriteOutcome): void {
    this.busy += 1;
    const client = this.idle.pop();
    if (client !== undefined) {
      this.writeOn(client, query, outcome);
      return;
    }
    this.acquire().then(
      (acquired) => this.writeOn(acquired, query, outcome),
      (error: unknown) => {
        this.finished();
        outcome(error instanceof Error ? error : new Error(String(error)), 0);
      },
    );
  }

  private writeOn(client: pg.Client, query: Query, outcome: WriteOutcome): void {
    const statement = new WriteStatement(query, (error, rowCount) => {
      // A statement refused before it was sent leaves the connection as it was.
      if (error !== undefined && statement.sent && !refusedOnly(error)) this.broken.add(client);
      this.release(client);
      outcome(error, rowCount);
      this.finished();
    });
    client.query(statement);
  }

  /** Resolves once no query or write is running or waiting for a connection. */
  drain(): Promise<void> {
    if (this.busy === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      this.drained.push(resolve);
    });
  }

  private finished(): void {
    this.busy -= 1;
    if (this.busy === 0) for (const resolve of this.drained.splice(0)) resolve();
  }

  /** A connection of the caller's own, for several statements in a row; give it back with `release`. */
  connect(): Promise<pg.Client> {
    const client = this.idle.pop();
    return client === undefined ? this.acquire() : Promise.resolve(client);
  }

  /**
   * Give back a connection from `connect`, or drop it when `failed` (it may be in a bad state).
   * pg answers a refused statement at the server's ErrorResponse, before its ReadyForQuery: a
   * connection given back then is still busy, and goes to its next user only once pg says it
   * is idle ('drain'), so no statement ever waits in pg's own queue behind another user's.
   */
  release(client: pg.Client, failed = false): void {
    if (failed) this.broken.add(client);
    if (this.broken.has(client) || this.ended) {
      this.drop(client);
      return;
    }
    if (!(client as unknown as PgClientState).readyForQuery) {
      this.returning.add(client);
      client.once('drain', () => {
        if (this.returning.delete(client)) this.release(client);
      });
      return;
    }
    const waiter = this.waiting.shift();
    if (waiter === undefined) this.idle.push(client);
    else waiter.resolve(client);
  }

  /** Close every connection; queries still waiting for one are refused. Checked-out ones close on return. */
  async end(): Promise<void> {
    this.ended = true;
    const refusal = new Error('the connection pool has ended');
    for (const waiter of this.waiting.splice(0)) waiter.reject(refusal);
    const returning = [...this.returning];
    this.returning.clear();
    await Promise.all([...this.idle.splice(0), ...returning].map((client) => this.drop(client)));
  }

  private acquire(): Promise<pg.Client> {
    if (this.ended) return Promise.reject(new Error('the connection pool has ended'));
    // A connection pg is about to finish with (see `release`) is nobody's yet: wait for it
    // rather than open another (a refused statement would otherwise cost a new connection).
    if (this.opened < this.max && this.returning.size <= this.waiting.length) return this.open();
    return new Promise<pg.Client>((resolve, reject) => {
      this.waiting.push({ resolve, reject });
    });
  }

  private async open(): Promise<pg.Client> {
    this.opened += 1;
    const client = new pg.Client(this.config);
    // Without an 'error' listener a connection that breaks would crash the process.
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client, undefined));
    try {
      await client.connect();
      return client;
    } catch (error) {
      this.opened -= 1;
      this.openForWaiter();
      throw error;
    }
  }

  /**
   * A connection broke: drop it now if idle (and tell `onError`, as nobody else will hear of
   * it), else when its user gives it back (that user's statement fails on its own).
   */
  private lost(client: pg.Client, error: Error | undefined): void {
    if (this.broken.has(client)) return;
    this.broken.add(client);
    if (this.returning.delete(client)) {
      void this.drop(client);
      return;
    }
    const at = this.idle.indexOf(client);
    if (at < 0) return;
    this.idle.splice(at, 1);
    void this.drop(client);
    if (error !== undefined && !this.ended) this.onError(error);
  }

  /** Close a connection (once) and free its place for a waiting query. */
  private drop(client: pg.Client): Promise<void> {
    if (this.dropped.has(client)) return Promise.resolve();
    this.dropped.add(client);
    this.broken.add(client);
    this.opened -= 1;
    this.openForWaiter();
    return client.end().catch(() => undefined);
  }

  private openForWaiter(): void {
    if (this.ended || this.waiting.length === 0 || this.opened >= this.max) return;
    const waiter = this.waiting.shift()!;
    this.open().then(waiter.resolve, waiter.reject);
  }
}

/** The part of `pg.Client` not in @types/pg that `release` reads: false while a statement is answered. */
interface PgClientState {
  readyForQuery: boolean;
}

/**
 * Whether `error` is the server refusing one statement (a constraint, bad SQL), which leaves the
 * connection usable; a FATAL or PANIC report, or an error of the connection itself, does not.
 */
function refusedOnly(error: unknown): boolean {
  return error instanceof pg.DatabaseError && error.severity !== 'FATAL' && error.severity !== 'PANIC';
}
