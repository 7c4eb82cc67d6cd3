/** `skein ui [--port n] [--host h] [--allow-actions]`: serve the inspector until Ctrl-C. */
import type { Stores } from '@skein/workflow-runtime';
import type { Io } from '../output.js';
import { startInspector } from '../ui/server.js';

/** Options of `skein ui`. */
export interface UiOptions {
  port?: number;
  host?: string;
  allowActions?: boolean;
  /** Ends the server (Ctrl-C). */
  signal: AbortSignal;
}

/** Serve until `signal` aborts. */
export async function uiCommand(stores: Stores, label: string, options: UiOptions, io: Io): Promise<number> {
  const host = options.host ?? '127.0.0.1';
  const inspector = await startInspector({
    stores,
    label,
    allowActions: options.allowActions === true,
    host,
    port: options.port ?? 7878,
  });
  io.out(
    `skein ui: ${inspector.url.href} (${options.allowActions === true ? 'actions allowed' : 'read-only'}; Ctrl-C stops it)\n`,
  );
  if (!isLoopback(host))
    io.err(`skein ui: listening on ${host}: anyone who reaches this address can read the log\n`);
  await new Promise<void>((resolve) => {
    if (options.signal.aborted) resolve();
    options.signal.addEventListener('abort', () => resolve(), { once: true });
  });
  await inspector.close();
  return 0;
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host.startsWith('127.');
}
