/**
 * Preparation of a component, in a short-lived worker thread: check the contract, transpile the
 * component with jco (core modules plus JavaScript glue that wires them), rewrite each core
 * module for the limits, and compile it. Nothing of the guest runs here.
 */
import { transpileBytes } from '@bytecodealliance/jco-transpile';
import { componentWit } from '@bytecodealliance/jco-transpile/wasm-tools';
import { contractViolations, type SandboxContract, worldItems } from './contract.js';
import { instrumentModule, type MemorySpec, type TableSpec } from './instrument.js';

/** A core module of a prepared component, compiled and ready to instantiate. */
export interface PreparedModule {
  module: WebAssembly.Module;
  memoryPages: number;
  /** The memory the module defines, which the host supplies (null: it defines none). */
  memory: MemorySpec | null;
  tables: TableSpec[];
}

/** A component ready for the pool: its glue and its compiled core modules by file name. */
export interface PreparedComponent {
  glue: string;
  modules: Record<string, PreparedModule>;
  exports: string[];
}

/** What preparation found: a prepared component, or why the component is refused. */
export type Preparation = { ok: true; prepared: PreparedComponent } | { ok: false; violations: string[] };

const GLUE = 'component.js';

/** Prepare `bytes` against `contract`. */
export async function prepare(bytes: Uint8Array, contract: SandboxContract): Promise<Preparation> {
  let wit: string;
  try {
    wit = await componentWit(bytes);
  } catch (error) {
    return { ok: false, violations: [`it is not a valid component (${message(error)})`] };
  }
  const items = worldItems(wit);
  const violations = contractViolations(items, contract);
  if (violations.length > 0) return { ok: false, violations };

  const { files } = await transpileBytes(bytes, {
    name: 'component',
    instantiation: { tag: 'sync' },
    asyncMode: { tag: 'sync' },
    base64Cutoff: Number.MAX_SAFE_INTEGER,
    emitTypescriptDeclarations: false,
    nodejsCompat: false,
    tlaCompat: false,
    validLiftingOptimization: true,
  });
  const glue = files[GLUE];
  if (glue === undefined) throw new Error('jco produced no glue for the component');
  const { default: binaryen } = await import('binaryen');
  const modules: Record<string, PreparedModule> = {};
  for (const [name, data] of Object.entries(files)) {
    if (!name.endsWith('.wasm')) continue;
    try {
      const { bytes: rewritten, memoryPages, memory, tables } = instrumentModule(binaryen, data);
      modules[name] = { module: await WebAssembly.compile(rewritten), memoryPages, memory, tables };
    } catch (error) {
      return { ok: false, violations: [`core module ${name} cannot be held to limits: ${message(error)}`] };
    }
  }
  return {
    ok: true,
    prepared: { glue: new TextDecoder().decode(glue), modules, exports: items.exports },
  };
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
