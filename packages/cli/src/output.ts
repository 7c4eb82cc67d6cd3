/**
 * What commands print: tables for people (cli-table3), JSON for scripts (`--json`: one JSON
 * document on stdout, or one per line for streams such as `history --follow`). Errors go to
 * stderr; stdout carries only the result.
 */
import Table from 'cli-table3';

/** Where a command writes; tests and the library entry pass their own. */
export interface Io {
  out(text: string): void;
  err(text: string): void;
  /** True when stderr is a terminal: progress bars are drawn there, and only then. */
  isTTY: boolean;
}

/** The process's own streams. */
export const processIo: Io = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  isTTY: process.stderr.isTTY === true,
};

/** A table of `rows` under `head`; plain borders, no colours, so it reads the same in a pipe. */
export function table(head: readonly string[], rows: readonly (readonly unknown[])[]): string {
  const t = new Table({ head: [...head], style: { head: [], border: [] }, wordWrap: false });
  for (const row of rows) t.push(row.map((cell) => (cell === undefined ? '' : String(cell))));
  return `${t.toString()}\n`;
}

/** `key: value` lines, aligned. */
export function fields(entries: readonly [string, unknown][]): string {
  const width = Math.max(...entries.map(([key]) => key.length));
  return entries
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => `${`${key}:`.padEnd(width + 2)}${String(value)}\n`)
    .join('');
}

/** JSON for scripts: Dates as ISO strings, BigInts as strings, Maps as objects, Sets as arrays. */
export function json(value: unknown): string {
  return `${JSON.stringify(value, replacer, 2)}\n`;
}

/** One JSON document on one line (NDJSON). */
export function jsonLine(value: unknown): string {
  return `${JSON.stringify(value, replacer)}\n`;
}

function replacer(_key: string, value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (value instanceof Map) return Object.fromEntries(value);
  if (value instanceof Set) return [...value];
  if (value instanceof Error) return { name: value.name, message: value.message };
  return value;
}

/** A time as ISO 8601 (UTC), or '' when absent. */
export function iso(ms: number | undefined): string {
  return ms === undefined ? '' : new Date(ms).toISOString();
}

/** A duration in ms as `850 ms`, `12.3 s`, `4.0 min`, `2.5 h`. */
export function duration(ms: number | undefined): string {
  if (ms === undefined) return '';
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(1)} s`;
  if (ms < 3_600_000) return `${(ms / 60_000).toFixed(1)} min`;
  return `${(ms / 3_600_000).toFixed(1)} h`;
}
