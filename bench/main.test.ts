import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain JavaScript module without declarations
import { staleBuild } from './main.mjs';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A repository with one package whose newest src file and dist were written at the given times (s). */
function repo(srcAt: number, distAt?: number): string {
  const root = mkdtempSync(join(tmpdir(), 'skein-bench-main-'));
  dirs.push(root);
  const pkg = join(root, 'packages', 'p');
  mkdirSync(join(pkg, 'src', 'deep'), { recursive: true });
  writeFileSync(join(pkg, 'src', 'index.ts'), '');
  writeFileSync(join(pkg, 'src', 'deep', 'inner.ts'), '');
  utimesSync(join(pkg, 'src', 'index.ts'), 1000, 1000);
  utimesSync(join(pkg, 'src', 'deep', 'inner.ts'), srcAt, srcAt);
  if (distAt !== undefined) {
    mkdirSync(join(pkg, 'dist'));
    writeFileSync(join(pkg, 'dist', 'index.js'), '');
    utimesSync(join(pkg, 'dist', 'index.js'), distAt, distAt);
  }
  return root;
}

describe('pnpm bench measures the built packages', () => {
  it('accepts a dist newer than every file of its src', () => {
    expect(staleBuild(repo(2000, 3000), ['p'])).toBeUndefined();
  });

  it('refuses a missing dist, naming it', () => {
    expect(staleBuild(repo(2000), ['p'])).toBe('packages/p/dist/index.js is missing');
  });

  it('refuses a dist older than a file anywhere under src, naming the file', () => {
    expect(staleBuild(repo(4000, 3000), ['p'])).toBe(
      'packages/p/dist is older than packages/p/src/deep/inner.ts',
    );
  });
});
