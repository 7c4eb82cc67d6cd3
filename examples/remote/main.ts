/** `pnpm example:remote`: a dispatcher (this process) and a worker process over signed HTTP. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runRemoteDemo } from './remote-demo.js';

const dir = mkdtempSync(join(tmpdir(), 'skein-remote-'));
try {
  await runRemoteDemo(dir);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
