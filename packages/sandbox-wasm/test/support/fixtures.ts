/**
 * Test components, built once per source and reused across test files and runs: a build is
 * cached in the temp dir under the hash of its source, the builder's version and the contract.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from '@bytecodealliance/jco-transpile/wasm-tools';
import { type BuiltComponent, buildComponent, evaluatorContract } from '@skein/sandbox-wasm';
import { sha256Hex } from '../../src/artifact.js';

const cacheDir = join(tmpdir(), 'skein-sandbox-fixtures');
const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url));

/** The test evaluator (test/fixtures/evaluator.js), built with the QuickJS backend. */
export async function builtEvaluator(): Promise<BuiltComponent> {
  const source = readFileSync(fixture('evaluator.js'));
  const { version } = createRequire(import.meta.url)('componentize-qjs/package.json') as { version: string };
  const key = createHash('sha256')
    .update(source)
    .update(version)
    .update(evaluatorContract.hash)
    .digest('hex');
  const path = join(cacheDir, `evaluator-${key.slice(0, 16)}.wasm`);
  mkdirSync(cacheDir, { recursive: true });
  if (!existsSync(path)) {
    const scratch = `${path}.${process.pid}.tmp`;
    await buildComponent({ source: fixture('evaluator.js'), out: scratch });
    renameSync(scratch, path); // atomic: test files building at once each see a whole file
  }
  const bytes = readFileSync(path);
  return { path, sha256: sha256Hex(bytes), contractHash: evaluatorContract.hash, bytes: bytes.byteLength };
}

/** A hand-written component (test/fixtures/<name>.wat), assembled into `dir`. */
export async function assembledComponent(
  name: string,
  dir: string,
): Promise<{ path: string; sha256: string }> {
  const bytes = await parse(readFileSync(fixture(`${name}.wat`), 'utf8'));
  const path = join(dir, `${name}.wasm`);
  await writeFile(path, bytes);
  return { path, sha256: sha256Hex(bytes) };
}
