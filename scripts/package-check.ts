/**
 * The publish check: every package under `packages/` as a user would install it. Run after
 * `pnpm build` (`.ci/run` does); nothing is fetched.
 *
 * 1. `npm pack --dry-run` lists what each package would publish; every file must be one a user
 *    needs: `package.json`, `README.md`, the build in `dist/` (code, declarations, source maps,
 *    and the migrations the stores read at run time), and the files a package names in
 *    `RUNTIME_FILES`. Nothing from `src/` or `test/`, no test file, no `.tsbuildinfo`.
 * 2. `pnpm pack` writes each package's tarball (workspace versions resolved, as published) to a
 *    temporary directory; `publint` lints the tarball and `attw --profile esm-only` checks its
 *    types (the packages are ESM-only: `node10` and CommonJS `require` are not supported).
 *
 *     pnpm build && pnpm package:check
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { publint } from 'publint';
import { formatMessage } from 'publint/utils';

const run = promisify(execFile);
const root = fileURLToPath(new URL('..', import.meta.url));
const packagesDir = join(root, 'packages');
const attw = join(root, 'node_modules', '.bin', 'attw');

/** Files outside `dist/` that a package reads at run time, by directory name. */
const RUNTIME_FILES: Record<string, RegExp[]> = {
  'sandbox-wasm': [/^wit\/[^/]+\.wit$/],
};

const ALWAYS = [/^package\.json$/, /^README\.md$/, /^LICENSE$/];
const BUILD = [/^dist\/[^/]+\.(js|d\.ts|js\.map)$/, /^dist\/migrations\/[^/]+\.sql$/];
const NEVER = [/(^|\/)(src|test|tests|__tests__)\//, /\.(test|spec)\.[cm]?[jt]s(\.map)?$/, /\.tsbuildinfo$/];

/** Why `path` does not belong in the published `pkg`, or undefined when it does. */
export function refusal(pkg: string, path: string): string | undefined {
  if (NEVER.some((re) => re.test(path))) return 'source or test file';
  const allowed = [...ALWAYS, ...BUILD, ...(RUNTIME_FILES[pkg] ?? [])];
  return allowed.some((re) => re.test(path)) ? undefined : 'not needed by a user';
}

interface DryRunEntry {
  name: string;
  files: { path: string }[];
}

/** `npm pack --dry-run` for all packages in one npm process. */
async function packedFiles(pkgs: string[]): Promise<Map<string, string[]>> {
  const dirs = pkgs.map((pkg) => `./packages/${pkg}`);
  const { stdout } = await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts', ...dirs], {
    cwd: root,
    maxBuffer: 64 * 1024 * 1024,
  });
  const entries = JSON.parse(stdout) as DryRunEntry[];
  return new Map(entries.map((entry, i) => [pkgs[i]!, entry.files.map((file) => file.path)]));
}

/** The problems publint and attw find in the packed tarball of `pkg`. */
async function lintTarball(pkg: string, dest: string): Promise<string[]> {
  const pkgDir = join(packagesDir, pkg);
  const { stdout } = await run('pnpm', ['pack', '--pack-destination', dest, '--json'], { cwd: pkgDir });
  const tarball = (JSON.parse(stdout) as { filename: string }).filename;
  const problems: string[] = [];
  const bytes = readFileSync(tarball);
  const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  const { messages, pkg: manifest } = await publint({
    pack: { tarball: buffer },
    level: 'warning',
    strict: true,
  });
  for (const message of messages)
    problems.push(`publint: ${formatMessage(message, manifest) ?? message.code}`);
  try {
    await run(
      attw,
      [tarball, '--profile', 'esm-only', '--no-definitely-typed', '--format', 'ascii', '--no-color'],
      {
        cwd: dest,
      },
    );
  } catch (error) {
    const { stdout: out = '', stderr = '' } = error as { stdout?: string; stderr?: string };
    problems.push(`attw: ${`${out}${stderr}`.trim()}`);
  }
  return problems;
}

/** Runs `tasks` with at most `limit` at once, keeping their order. */
async function pooled<T>(tasks: (() => Promise<T>)[], limit: number): Promise<T[]> {
  const results: T[] = new Array(tasks.length);
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const i = next++;
      results[i] = await tasks[i]!();
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker));
  return results;
}

async function main(): Promise<number> {
  const pkgs = readdirSync(packagesDir).filter((name) => existsSync(join(packagesDir, name, 'package.json')));
  const missing = pkgs.filter((pkg) => !existsSync(join(packagesDir, pkg, 'dist', 'index.js')));
  if (missing.length > 0) {
    console.error(`package-check: no build in ${missing.join(', ')}: run pnpm build first`);
    return 1;
  }
  const dest = mkdtempSync(join(tmpdir(), 'skein-pack-'));
  try {
    const [files, linted] = await Promise.all([
      packedFiles(pkgs),
      pooled(
        pkgs.map((pkg) => () => lintTarball(pkg, dest)),
        3,
      ),
    ]);
    let failed = 0;
    pkgs.forEach((pkg, i) => {
      const listed = files.get(pkg) ?? [];
      const problems = [
        ...listed.flatMap((path) => {
          const why = refusal(pkg, path);
          return why === undefined ? [] : [`npm pack: ${path}: ${why}`];
        }),
        ...(linted[i] ?? []),
      ];
      if (problems.length === 0) {
        console.log(`ok    ${pkg} (${listed.length} files)`);
        return;
      }
      failed++;
      console.log(`FAIL  ${pkg}`);
      for (const problem of problems) console.log(`      ${problem.replaceAll('\n', '\n      ')}`);
    });
    console.log(`package-check: ${pkgs.length - failed} of ${pkgs.length} packages ready to publish`);
    return failed === 0 ? 0 : 1;
  } finally {
    rmSync(dest, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exitCode = await main();
