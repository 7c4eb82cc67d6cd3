/**
 * zod is a peer dependency of every package that uses it: an application's zod and Skein's are
 * the same copy. The application here is a directory outside the workspace with its own copy of
 * zod and of the built `@skein/workflow-runtime` in its node_modules, as a package manager
 * installs them: Skein loads the application's zod file, and the application's configuration
 * reaches Skein's own schemas. (zod 4 keeps its configuration global, so the file each side
 * loads is what tells one copy from two.)
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const runtimeDir = join(root, 'packages/workflow-runtime');
const requireFromRuntime = createRequire(join(runtimeDir, 'package.json'));

/** The directory of `name`'s package as `from` resolves it. */
function packageDir(name: string, from: NodeJS.Require): string {
  return dirname(from.resolve(`${name}/package.json`));
}

/** An application directory: its own zod, and the built runtime with its other dependency. */
function installApp(dir: string, options: { nestedZod: boolean }): void {
  const modules = join(dir, 'node_modules');
  const installed = join(modules, '@skein/workflow-runtime');
  mkdirSync(installed, { recursive: true });
  cpSync(join(runtimeDir, 'package.json'), join(installed, 'package.json'));
  cpSync(join(runtimeDir, 'dist'), join(installed, 'dist'), { recursive: true });
  for (const dependency of ['ulid', 'croner'])
    cpSync(packageDir(dependency, requireFromRuntime), join(modules, dependency), {
      recursive: true,
      dereference: true,
    });
  cpSync(packageDir('zod', requireFromRuntime), join(modules, 'zod'), { recursive: true, dereference: true });
  // What a regular dependency would get: a copy of its own, beside the application's.
  if (options.nestedZod)
    cpSync(packageDir('zod', requireFromRuntime), join(installed, 'node_modules/zod'), {
      recursive: true,
      dereference: true,
    });
  cpSync(fileURLToPath(new URL('./app.mjs', import.meta.url)), join(dir, 'app.mjs'));
}

interface Seen {
  output: string;
  input: string;
  options: string;
  zodFiles: { app: string; skein: string };
}

function runApp(dir: string): Seen {
  return JSON.parse(execFileSync(process.execPath, [join(dir, 'app.mjs')], { cwd: dir, encoding: 'utf8' }));
}

describe('zod as a peer dependency', () => {
  const dir = mkdtempSync(join(tmpdir(), 'skein-zod-app-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('every package whose code imports zod declares it as a peer, never as a dependency', () => {
    for (const name of [
      'workflow-runtime',
      'worker-runtime-local',
      'worker-runtime-http',
      'conformance',
      'testkit',
      'sandbox-wasm',
    ]) {
      const manifest = JSON.parse(readFileSync(join(root, 'packages', name, 'package.json'), 'utf8'));
      expect(manifest.peerDependencies?.zod, name).toBe('^4.6.7');
      expect(manifest.dependencies?.zod, name).toBeUndefined();
    }
  });

  it("an application's own zod is the one Skein validates with: its configuration reaches Skein's schemas", () => {
    expect(existsSync(join(runtimeDir, 'dist/index.js')), 'run `pnpm build` first').toBe(true);
    const app = join(dir, 'peer');
    installApp(app, { nestedZod: false });
    const seen = runApp(app);
    expect(seen.output).toBe('hello ana');
    expect(seen.input).toContain('refused by the application zod');
    expect(seen.options).toContain('maintenance.intervalMs: refused by the application zod');
    expect(seen.zodFiles.skein).toBe(seen.zodFiles.app);
    expect(seen.zodFiles.app.startsWith(join(app, 'node_modules/zod/'))).toBe(true);
  });

  it('the check can fail: with a copy of its own (as a regular dependency installs it), Skein loads another zod', () => {
    const app = join(dir, 'nested');
    installApp(app, { nestedZod: true });
    const seen = runApp(app);
    expect(seen.output).toBe('hello ana');
    expect(seen.zodFiles.skein).not.toBe(seen.zodFiles.app);
    expect(
      seen.zodFiles.skein.startsWith(join(app, 'node_modules/@skein/workflow-runtime/node_modules/zod/')),
    ).toBe(true);
  });
});
