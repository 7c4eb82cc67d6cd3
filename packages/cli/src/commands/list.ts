/** `skein list [--status s,…] [--workflow w] [--blocked] [--limit n] [--cursor c] [--json]`. */
import type { ExecutionStatus, Stores } from '@skein/workflow-runtime';
import { listPage } from '../inspect.js';
import { type Io, iso, json, table } from '../output.js';
import { short } from '../timeline.js';

/** Options of `skein list`. */
export interface ListOptions {
  status?: ExecutionStatus[];
  workflow?: string;
  /** Only blocked executions, with why (adr/0058). */
  blocked?: boolean;
  limit?: number;
  cursor?: string;
  json?: boolean;
}

/** Print one page of executions; the next page's cursor is printed after the table. */
export async function listCommand(stores: Stores, options: ListOptions, io: Io): Promise<number> {
  const page = await listPage(stores, options);
  if (options.json === true) {
    io.out(json(page));
    return 0;
  }
  if (page.items.length === 0) {
    io.out('no executions match\n');
    return 0;
  }
  const head = ['execution', 'workflow', 'version', 'status', 'seq', 'updated'];
  const rows = page.items.map((item) => [
    item.executionId,
    item.workflow,
    item.version,
    item.status,
    item.sequence,
    iso(item.updatedAt),
  ]);
  io.out(
    options.blocked === true
      ? table(
          [...head, 'blocked since', 'attempts', 'why'],
          page.items.map((item, i) => [
            ...rows[i]!,
            iso(item.blocked?.since),
            item.blocked?.attempts,
            `${item.blocked?.code}: ${short(item.blocked?.message ?? '', 80)}`,
          ]),
        )
      : table(head, rows),
  );
  if (page.nextCursor !== undefined) io.out(`more: pass --cursor ${page.nextCursor}\n`);
  return 0;
}
