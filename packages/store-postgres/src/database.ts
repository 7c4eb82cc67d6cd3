/**
 * The pool every store shares, behind one `query` that refuses calls after `close()` and lets
 * `close()` wait for the calls in flight. Each pooled connection starts with `search_path`
 * set to the validated schema, so queries and migrations name tables without a schema.
 */
import pg from 'pg';
import { ConnectionPool } from './connection-pool.js';
import { isUniqueViolation, StoreClosedError } from './errors.js';
import type { ResolvedOptions } from './options.js';

/** One named query: `name` makes pg prepare it once per connection. */
export interface Query {
  name: string;
  text: string;
  values: unknown[];
}

/** Parse int8 (fences, seqs, epoch milliseconds, counts) as a number; refuse to lose precision. */
function parseInt8(text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value)) throw new RangeError(`int8 ${text} is beyond Number.MAX_SAFE_INTEGER`);
  return value;
}

const INT8_OID = 20;

/** Type parsers of this pool only; the global `pg.types` stay untouched for other code. */
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID && format !== 'binary'
      ? parseInt8
      : pg.types.getTypeParser(oid, format ?? 'text')) as pg.CustomTypesConfig['getTypeParser'],
};

/** Connection settings shared by the pool and the dedicated LISTEN connection. */
export function connectionConfig(options: ResolvedOptions): pg.ClientConfig {
  return {
    connectionString: options.url,
    // A startup parameter, not SQL: the schema is a validated identifier (see options.ts).
    options: `-c search_path=${options.schema}`,
    application_name: 'skein',
    types,
  };
}

/** The stores' shared pool. */
export class Database {
  readonly pool: ConnectionPool;
  private closed = false;
  private closing: Promise<void> | undefined;

  constructor(readonly options: ResolvedOptions) {
    this.pool = new ConnectionPool(connectionConfig(options), options.poolSize, options.onError);
  }

  get schema(): string {
    return this.options.schema;
  }

  /** Run one query; `operation` names the caller in a {@link StoreClosedError}. */
  query<Row extends pg.QueryResultRow>(operation: string, query: Query): Promise<pg.QueryResult<Row>> {
    if (this.closed) return Promise.reject(new StoreClosedError(this.schema, operation));
    return this.pool.query<Row>(query);
  }

  /**
   * Run one write statement (no rows back, see write-statement.ts): true when it wrote `count`
   * rows; false when it wrote fewer, or hit a unique violation (which aborts a statement whole,
   * so nothing of it was written); rejects on any other error. `settled` runs as the answer
   * arrives, before the promise settles.
   */
  writeAll(operation: string, query: Query, count: number, settled?: () => void): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      const outcome = (error: Error | undefined, rowCount: number): void => {
        settled?.();
        if (error === undefined) resolve(rowCount === count);
        else if (isUniqueViolation(error)) resolve(false);
        else reject(error);
      };
      if (this.closed) outcome(new StoreClosedError(this.schema, operation), 0);
      else this.pool.write(query, outcome);
    });
  }

  /** Refuse new calls, wait for the ones in flight, then close every pooled connection. */
  close(): Promise<void> {
    this.closed = true;
    this.closing ??= this.pool.drain().then(() => this.pool.end());
    return this.closing;
  }
}
