/**
 * `loadComponent`: an artifact pinned by sha256 and contract hash, checked and prepared once
 * per process. Preparations are cached by `(artifact sha256, contract hash)`, so loading the
 * same artifact again (from any path) reuses the compiled modules.
 */
import { resolve } from 'node:path';
import { parseWith } from '@skein/workflow-runtime/internal';
import { z } from 'zod';
import { readArtifact } from './artifact.js';
import { evaluatorContract, type SandboxContract } from './contract.js';
import { SandboxArtifactMismatchError, SandboxContractError } from './errors.js';
import type { PreparedComponent } from './prepare.js';
import type { WorkerMessage } from './protocol.js';
import { ready, startWorker } from './threads.js';

/** What {@link loadComponent} takes. */
export interface LoadOptions {
  /** Path of the component artifact. */
  path: string;
  /** The artifact's pinned sha256 (hex); other bytes are refused before anything runs. */
  sha256: string;
  /** The pinned hash of the contract it was built against (default: the evaluator contract's, unchecked). */
  contractHash?: string;
}

/** A loaded, checked and prepared component; pass it to `SandboxPool.invoke`. */
export class SandboxComponent {
  /** Cache key: `<artifact sha256>:<contract hash>`. */
  readonly key: string;

  /** @internal Use {@link loadComponent}. */
  constructor(
    /** sha256 of the artifact. */
    readonly sha256: string,
    /** The contract the component keeps. */
    readonly contract: SandboxContract,
    /** Where it was loaded from. */
    readonly path: string,
    /** @internal The compiled core modules and glue, handed to worker threads. */
    readonly prepared: PreparedComponent,
  ) {
    this.key = `${sha256}:${contract.hash}`;
  }

  /** The export items of the component's world (the contract's and any others, which are never called). */
  get exports(): readonly string[] {
    return this.prepared.exports;
  }
}

const sha256Pattern = /^[0-9a-f]{64}$/;
const loadSchema = z
  .object({
    path: z.string().min(1),
    sha256: z.string().regex(sha256Pattern, 'must be 64 lower-case hex digits'),
    contractHash: z.string().regex(sha256Pattern, 'must be 64 lower-case hex digits').optional(),
  })
  .strict();

const prepared = new Map<string, Promise<PreparedComponent>>();

/**
 * Load a component pinned by hash. Refuses, before any of its code runs, bytes that do not have
 * the pinned sha256 (`SANDBOX_ARTIFACT_MISMATCH`) and a component that imports anything outside
 * its contract, `wasi:*` included (`SANDBOX_CONTRACT_VIOLATION`).
 * @example
 * const evaluator = await loadComponent({ path: './evaluator.wasm', sha256: '9f2c…' });
 */
export async function loadComponent(options: LoadOptions): Promise<SandboxComponent> {
  const given = parseWith(loadSchema, options, 'loadComponent options', 'options');
  const path = resolve(given.path);
  const contract = evaluatorContract;
  const { bytes, sha256 } = await readArtifact(path);
  if (sha256 !== given.sha256) throw new SandboxArtifactMismatchError(path, given.sha256, sha256);
  if (given.contractHash !== undefined && given.contractHash !== contract.hash) {
    throw new SandboxContractError(sha256, path, [
      `it was pinned to contract ${given.contractHash}, but this host implements ${contract.world} (${contract.hash})`,
    ]);
  }
  const key = `${sha256}:${contract.hash}`;
  let preparing = prepared.get(key);
  if (preparing === undefined) {
    preparing = prepareInWorker(bytes, contract, sha256, path);
    prepared.set(key, preparing);
    void preparing.catch(() => prepared.delete(key));
  }
  return new SandboxComponent(sha256, contract, path, await preparing);
}

async function prepareInWorker(
  bytes: Uint8Array,
  contract: SandboxContract,
  sha256: string,
  path: string,
): Promise<PreparedComponent> {
  const worker = startWorker('prepare');
  try {
    await ready(worker);
    const answer = await new Promise<WorkerMessage>((resolveAnswer, reject) => {
      worker.once('message', resolveAnswer);
      worker.once('error', reject);
      worker.once('exit', (code) => reject(new Error(`the preparation thread exited (code ${code})`)));
      worker.postMessage({ type: 'prepare', bytes, contract });
    });
    if (answer.type === 'failed') throw new Error(`preparing ${path} failed: ${answer.message}`);
    if (answer.type !== 'prepared')
      throw new Error(`unexpected answer ${answer.type} from the preparation thread`);
    const { preparation } = answer;
    if (!preparation.ok) throw new SandboxContractError(sha256, path, preparation.violations);
    return preparation.prepared;
  } finally {
    await worker.terminate();
  }
}
