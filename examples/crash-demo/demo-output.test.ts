import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));

describe('pnpm demo, as the README runs it', () => {
  it('exits 0 and writes nothing to stderr (no store used after it is closed)', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'examples/crash-demo/main.ts'], {
      cwd: root,
      env: { ...process.env, TSX_TSCONFIG_PATH: `${root}tsconfig.json` },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toContain('Recovered: completed steps did not run again.');
  }, 60_000);
});
