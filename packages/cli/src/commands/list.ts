/** `skein list [--status s,…] [--workflow w] [--limit n] [--cursor c] [--json]`. */
import type { ExecutionStatus, Stores } from '@skein/workflow-runtime';
import { listPage } from '../inspect.js';
import { type Io, iso, json, table } from '../output.js';

/** Options of `skein list`. */
export interface ListOptions {
  status?: ExecutionStatus[];
  workflow?: string;
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
  io.out(
    table(
      ['execution', 'workflow', 'version', 'status', 'seq', 'updated'],
      page.items.map((item) => [
        item.executionId,
        item.workflow,
        item.version,
        item.status,
        item.sequence,
        iso(item.updatedAt),
      ]),
    ),
  );
  if (page.nextCursor !== undefined) io.out(`more: pass --cursor ${page.nextCursor}\n`);
  return 0;
}
