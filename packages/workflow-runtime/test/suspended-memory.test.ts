import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../../', import.meta.url));

describe('a suspended execution holds no memory beyond its rows', () => {
  it('suspending a body that holds 20 KB leaves well under 20 KB per execution on the heap', async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        '--expose-gc',
        '--import',
        'tsx',
        fileURLToPath(new URL('./fixtures/suspended-heap.ts', import.meta.url)),
      ],
      { cwd: root, env: { ...process.env, TSX_TSCONFIG_PATH: `${root}tsconfig.json` } },
    );
    const { bytesPerExecution } = JSON.parse(stdout.trim().split('\n').at(-1)!) as {
      bytesPerExecution: number;
    };
    // The body's frame (its ctx, state and the 20 KB value) must be garbage once it suspends;
    // what stays is the in-process wake-up timer and the log entries of the in-memory store.
    expect(bytesPerExecution).toBeLessThan(8_000);
  }, 60_000);
});
