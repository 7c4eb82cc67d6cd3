/**
 * Resident bodies are bounded (adr/0068): past `maxResident` the least recently suspended body
 * is dropped with everything its frames hold, and closing the runtime drops the rest. Counted
 * with a FinalizationRegistry over an object each body holds, in a child process with --expose-gc.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));

async function freedWith(
  maxResident: number,
): Promise<{ count: number; afterSuspensions: number; afterClose: number }> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [
      '--expose-gc',
      '--import',
      'tsx',
      fileURLToPath(new URL('./fixtures/resident-heap.ts', import.meta.url)),
      String(maxResident),
    ],
    { cwd: root, env: { ...process.env, TSX_TSCONFIG_PATH: `${root}tsconfig.json` } },
  );
  return JSON.parse(stdout.trim().split('\n').at(-1)!);
}

describe('resident bodies hold memory only up to maxResident', () => {
  it('of 300 suspended bodies with maxResident 100, the 200 evicted ones are freed, and the rest once the runtime closes', async () => {
    const { count, afterSuspensions, afterClose } = await freedWith(100);
    expect(afterSuspensions).toBe(count - 100);
    expect(afterClose).toBe(count);
  }, 60_000);

  it('with maxResident 0 every suspended body is freed at once', async () => {
    const { count, afterSuspensions } = await freedWith(0);
    expect(afterSuspensions).toBe(count);
  }, 60_000);
});
