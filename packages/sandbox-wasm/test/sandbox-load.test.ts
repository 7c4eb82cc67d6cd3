import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  buildComponent,
  evaluatorContract,
  loadComponent,
  SandboxArtifactMismatchError,
  SandboxBuildError,
  SandboxContractError,
  SandboxErrorCodes,
} from '@skein/sandbox-wasm';
import { InvalidInputError } from '@skein/workflow-runtime';
import { afterAll, describe, expect, it } from 'vitest';
import { assembledComponent, builtEvaluator } from './support/fixtures.js';
import { rejection } from './support/pool.js';

const dir = mkdtempSync(join(tmpdir(), 'skein-sandbox-load-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('P1 an artifact is pinned by sha256', () => {
  it('a drifted artifact is refused with SANDBOX_ARTIFACT_MISMATCH before anything runs', async () => {
    const built = await builtEvaluator();
    const drifted = join(dir, 'drifted.wasm');
    const bytes = readFileSync(built.path);
    bytes[bytes.length - 1]! ^= 0xff;
    writeFileSync(drifted, bytes);
    const error = await rejection(loadComponent({ path: drifted, sha256: built.sha256 }));
    expect(error).toBeInstanceOf(SandboxArtifactMismatchError);
    expect(error.code).toBe(SandboxErrorCodes.ArtifactMismatch);
    expect(error).toMatchObject({ path: drifted, expected: built.sha256 });
    expect(error.message).toContain('drifted');
  });

  it('bad options are refused, naming the field', async () => {
    const error = await rejection(loadComponent({ path: join(dir, 'x.wasm'), sha256: 'abc' }));
    expect(error).toBeInstanceOf(InvalidInputError);
    expect(error.message).toContain('options.sha256');
  });
});

describe('P2 a component keeps its contract or is refused at load', () => {
  it('a component importing wasi:filesystem is refused with SANDBOX_CONTRACT_VIOLATION', async () => {
    const component = await assembledComponent('imports-wasi-filesystem', dir);
    const error = await rejection(loadComponent(component));
    expect(error).toBeInstanceOf(SandboxContractError);
    expect(error.code).toBe(SandboxErrorCodes.ContractViolation);
    const { violations } = error as SandboxContractError;
    expect(violations[0]).toContain('wasi:filesystem/types@0.2.6');
    expect(violations[0]).toContain('no WASI');
  });

  it('an import outside the contract, or the contract import with another signature, is refused', async () => {
    for (const [name, item] of [
      ['imports-foreign-function', 'import fetch: func(url: string) -> string;'],
      ['imports-log-wrong-signature', 'import log: func(message: u32);'],
    ] as const) {
      const error = await rejection(loadComponent(await assembledComponent(name, dir)));
      expect(error).toBeInstanceOf(SandboxContractError);
      expect((error as SandboxContractError).violations[0]).toContain(item);
      expect((error as SandboxContractError).violations).toContain(
        'it does not export evaluate: func(input: string) -> result<string, string>',
      );
    }
  });

  it('an artifact pinned to another contract hash is refused; its own hash is accepted', async () => {
    const built = await builtEvaluator();
    const other = 'f'.repeat(64);
    const error = await rejection(
      loadComponent({ path: built.path, sha256: built.sha256, contractHash: other }),
    );
    expect(error).toBeInstanceOf(SandboxContractError);
    expect(error.message).toContain(other);
    const loaded = await loadComponent({
      path: built.path,
      sha256: built.sha256,
      contractHash: built.contractHash,
    });
    expect(loaded.contract).toBe(evaluatorContract);
    expect(loaded.exports).toContain('export evaluate: func(input: string) -> result<string, string>;');
  }, 120_000);
});

describe('P3 compiled modules are cached per (artifact hash, contract hash)', () => {
  it('the same artifact loaded again, from another path, reuses the preparation', async () => {
    const built = await builtEvaluator();
    const copy = join(dir, 'copy.wasm');
    copyFileSync(built.path, copy);
    const first = await loadComponent({ path: built.path, sha256: built.sha256 });
    const second = await loadComponent({ path: copy, sha256: built.sha256 });
    expect(second.key).toBe(`${built.sha256}:${evaluatorContract.hash}`);
    expect(second.prepared).toBe(first.prepared);
    expect(second.path).toBe(copy);
  }, 120_000);
});

describe('P4 buildComponent', () => {
  it('builds with the QuickJS backend, importing nothing but log; its hashes pin it', async () => {
    const source = join(dir, 'tiny.js');
    writeFileSync(source, 'export function evaluate(input) { log(input); return input.toUpperCase(); }\n');
    const built = await buildComponent({ source, out: join(dir, 'tiny.wasm') });
    expect(built.contractHash).toBe(evaluatorContract.hash);
    expect(built.bytes).toBeLessThan(4 << 20); // QuickJS: about 1.6 MB, not StarlingMonkey's 12 MB
    const loaded = await loadComponent({ path: built.path, sha256: built.sha256 });
    expect(loaded.sha256).toBe(built.sha256);
  }, 120_000);

  it('a source that does not compile fails with SANDBOX_BUILD_FAILED; bad options are refused', async () => {
    const source = join(dir, 'broken.js');
    writeFileSync(source, 'export function evaluate(input) { return ( }\n');
    const error = await rejection(buildComponent({ source, out: join(dir, 'broken.wasm') }));
    expect(error).toBeInstanceOf(SandboxBuildError);
    expect(error.code).toBe(SandboxErrorCodes.BuildFailed);
    const options = await rejection(buildComponent({ source: '', out: join(dir, 'x.wasm') }));
    expect(options).toBeInstanceOf(InvalidInputError);
  }, 120_000);
});
