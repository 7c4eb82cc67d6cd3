/** `skein dead-letters [--workflow w] [--limit n] [--cursor c] [--json]`: dead-lettered executions and why. */
import type { Stores } from '@skein/workflow-runtime';
import { deadLetters } from '../inspect.js';
import { type Io, iso, json, table } from '../output.js';

/** Options of `skein dead-letters`. */
export interface DeadLettersOptions {
  workflow?: string;
  limit?: number;
  cursor?: string;
  json?: boolean;
}

/** Print one page of dead letters with their reasons. */
export async function deadLettersCommand(
  stores: Stores,
  options: DeadLettersOptions,
  io: Io,
): Promise<number> {
  const page = await deadLetters(stores, options);
  if (options.json === true) {
    io.out(json(page));
    return 0;
  }
  if (page.items.length === 0) {
    io.out('no dead-lettered executions\n');
    return 0;
  }
  io.out(
    table(
      ['execution', 'workflow', 'dead-lettered', 'reason'],
      page.items.map((d) => [d.executionId, d.workflow, iso(d.deadLetteredAt), d.reason]),
    ),
  );
  if (page.nextCursor !== undefined) io.out(`more: pass --cursor ${page.nextCursor}\n`);
  return 0;
}
