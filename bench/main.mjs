/**
 * `pnpm bench` starts here. By default the bench imports the built packages (each package's
 * `dist`, through its `exports`), as an application does; it refuses to run when a package's
 * `dist` is missing or older than its `src` (run `pnpm build`). `--src` runs the packages'
 * TypeScript sources instead, for quick iteration. The bench's own code is TypeScript run
 * through tsx either way; what differs is only where `@skein/*` resolves (adr/0038).
 *
 * Plain JavaScript, so it runs before anything is compiled.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = fileURLToPath(new URL('../', import.meta.url));
/** The packages the bench imports. */
const PACKAGES = [
  'workflow-runtime',
  'store-sqlite',
  'store-postgres',
  'worker-runtime-local',
  'worker-runtime',
  'worker-runtime-http',
  'sandbox-wasm',
];

/** The newest file under `dir`: [path, mtime in ms]. */
function newest(dir) {
  let best = ['', 0];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    const found = entry.isDirectory() ? newest(path) : [path, statSync(path).mtimeMs];
    if (found[1] > best[1]) best = found;
  }
  return best;
}

/**
 * Why the built packages under `root` cannot be benchmarked, or undefined when every `dist` is
 * there and no file of its package's `src` is newer.
 */
export function staleBuild(root = repoRoot, packages = PACKAGES) {
  for (const name of packages) {
    const dist = join(root, 'packages', name, 'dist', 'index.js');
    if (!existsSync(dist)) return `packages/${name}/dist/index.js is missing`;
    const [path, mtime] = newest(join(root, 'packages', name, 'src'));
    if (mtime > statSync(dist).mtimeMs) {
      return `packages/${name}/dist is older than ${relative(root, path)}`;
    }
  }
  return undefined;
}

/** The environment that makes tsx resolve `@skein/*` to `src` (root tsconfig paths) or to `dist` (none). */
export function modeEnv(mode) {
  const tsconfig =
    mode === 'src' ? join(repoRoot, 'tsconfig.json') : join(repoRoot, 'bench', 'tsconfig.dist.json');
  return { ...process.env, TSX_TSCONFIG_PATH: tsconfig, SKEIN_BENCH_MODE: mode };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const mode = args.includes('--src') ? 'src' : 'dist';
  if (mode === 'dist') {
    const why = staleBuild();
    if (why !== undefined) {
      console.error(
        `bench: ${why}. The bench measures the built packages: run \`pnpm build\` first ` +
          '(or `pnpm bench --src` to measure the TypeScript sources).',
      );
      process.exit(1);
    }
  }
  const child = spawn(process.execPath, ['--import', 'tsx', join(repoRoot, 'bench', 'run.ts'), ...args], {
    cwd: repoRoot,
    env: modeEnv(mode),
    stdio: 'inherit',
  });
  child.once('exit', (code) => process.exit(code ?? 1));
}
