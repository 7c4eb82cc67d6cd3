/** The options of `openPostgresStores`, checked before anything is opened. */
import { DEFAULT_MAX_PAYLOAD_BYTES } from '@skein/workflow-runtime';
import { InvalidPostgresOptionError } from './errors.js';

/** Options of {@link openPostgresStores}. */
export interface PostgresStoresOptions {
  /** Connection URL, e.g. `postgres://user:pass@host:5432/db` (required). */
  url: string;
  /**
   * Schema holding Skein's tables; created on open if missing. Lower-case letters, digits and
   * `_`, starting with a letter or `_`, at most 63 characters, not `pg_…` (default: 'skein').
   */
  schema?: string;
  /** Most connections this process opens for the stores (default: 10). */
  poolSize?: number;
  /** Per-event payload limit in UTF-8 bytes (default: 1 MiB). */
  maxPayloadBytes?: number;
  /**
   * Called with errors that belong to no caller: an idle pooled connection that broke, a
   * lost LISTEN connection (it reconnects), a wake-up handler that threw
   * (default: `process.emitWarning`).
   */
  onError?: (error: unknown) => void;
}

/** Options with every default filled in. */
export interface ResolvedOptions {
  url: string;
  schema: string;
  poolSize: number;
  maxPayloadBytes: number;
  onError: (error: unknown) => void;
}

/** Default schema name. */
export const DEFAULT_SCHEMA = 'skein';
/** Default most connections per process. */
export const DEFAULT_POOL_SIZE = 10;

const IDENTIFIER = /^[a-z_][a-z0-9_]{0,62}$/;

/** Check every option; throws {@link InvalidPostgresOptionError} naming the first bad one. */
export function resolveOptions(options: PostgresStoresOptions): ResolvedOptions {
  if (typeof options !== 'object' || options === null) {
    throw new InvalidPostgresOptionError('(options)', 'must be an object with at least { url }');
  }
  const { url, schema = DEFAULT_SCHEMA, poolSize = DEFAULT_POOL_SIZE } = options;
  const maxPayloadBytes = options.maxPayloadBytes ?? DEFAULT_MAX_PAYLOAD_BYTES;
  if (typeof url !== 'string' || url.length === 0) {
    throw new InvalidPostgresOptionError('url', `must be a non-empty connection URL, got ${String(url)}`);
  }
  assertIdentifier('schema', schema);
  if (!Number.isSafeInteger(poolSize) || poolSize < 1) {
    throw new InvalidPostgresOptionError('poolSize', `must be a positive integer, got ${poolSize}`);
  }
  if (!Number.isSafeInteger(maxPayloadBytes) || maxPayloadBytes < 1) {
    throw new InvalidPostgresOptionError(
      'maxPayloadBytes',
      `must be a positive integer, got ${maxPayloadBytes}`,
    );
  }
  if (options.onError !== undefined && typeof options.onError !== 'function') {
    throw new InvalidPostgresOptionError('onError', 'must be a function');
  }
  return { url, schema, poolSize, maxPayloadBytes, onError: options.onError ?? warn };
}

/** Throw unless `value` is a plain lower-case identifier that is not reserved for PostgreSQL. */
function assertIdentifier(option: string, value: unknown): asserts value is string {
  if (typeof value !== 'string' || !IDENTIFIER.test(value)) {
    throw new InvalidPostgresOptionError(
      option,
      `must match ${IDENTIFIER.source} (lower-case letters, digits, _; at most 63), got ${JSON.stringify(value)}`,
    );
  }
  if (value.startsWith('pg_')) {
    throw new InvalidPostgresOptionError(option, `must not start with pg_ (reserved), got "${value}"`);
  }
}

/**
 * Quote a schema name that {@link resolveOptions} validated. The only place an identifier
 * reaches SQL text; values always travel as parameters.
 */
export function quoteIdentifier(identifier: string): string {
  if (!IDENTIFIER.test(identifier)) throw new Error(`not a validated identifier: ${identifier}`);
  return `"${identifier}"`;
}

function warn(error: unknown): void {
  process.emitWarning(error instanceof Error ? error : new Error(String(error)), 'SkeinPostgresWarning');
}
