/**
 * `buildComponent`: a JavaScript evaluator to a WebAssembly component with jco's QuickJS
 * backend (componentize-qjs, the engine `jco componentize --backend quickjs` uses), in its
 * synchronous runtime with every WASI import replaced by a trap, so the component imports
 * nothing but the contract's `log`. See adr/0026-sandbox-quickjs-components.md.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { parseWith } from '@skein/workflow-runtime/internal';
import { z } from 'zod';
import { sha256Hex } from './artifact.js';
import { evaluatorContract } from './contract.js';
import { SandboxBuildError } from './errors.js';

/** What {@link buildComponent} takes. */
export interface BuildOptions {
  /** Path of the evaluator's ES module; it exports `evaluate(input: string): string` and may call the global `log`. */
  source: string;
  /** Where to write the component. */
  out: string;
  /** Use QuickJS's smaller, slower size-optimized runtime (default: false). */
  optimizeSize?: boolean;
}

/** What {@link buildComponent} built: pin `sha256` and `contractHash` in `loadComponent`. */
export interface BuiltComponent {
  /** Absolute path of the component written. */
  path: string;
  /** sha256 (hex) of the component's bytes. */
  sha256: string;
  /** Hash of the WIT contract it was built against. */
  contractHash: string;
  /** Size of the component in bytes. */
  bytes: number;
}

const buildSchema = z
  .object({ source: z.string().min(1), out: z.string().min(1), optimizeSize: z.boolean().optional() })
  .strict();

/**
 * Build an evaluator component from a JavaScript module.
 * @example
 * const built = await buildComponent({ source: './evaluator.js', out: './evaluator.wasm' });
 * const evaluator = await loadComponent({ path: built.path, sha256: built.sha256 });
 */
export async function buildComponent(options: BuildOptions): Promise<BuiltComponent> {
  const { source, out, optimizeSize } = parseWith(buildSchema, options, 'buildComponent options', 'options');
  const jsPath = resolve(source);
  let component: Uint8Array;
  try {
    const jsSource = await readFile(jsPath, 'utf8');
    const { componentize } = await import('componentize-qjs');
    ({ component } = await componentize({
      witPath: evaluatorContract.witPath,
      world: evaluatorContract.worldName,
      jsSource,
      jsPath,
      sync: true,
      stubWasi: true,
      optSize: optimizeSize ?? false,
    }));
  } catch (error) {
    throw new SandboxBuildError(jsPath, { cause: error });
  }
  const path = resolve(out);
  await writeFile(path, component);
  return {
    path,
    sha256: sha256Hex(component),
    contractHash: evaluatorContract.hash,
    bytes: component.byteLength,
  };
}
