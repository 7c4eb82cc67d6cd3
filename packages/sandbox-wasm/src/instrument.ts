/**
 * Rewrites one core Wasm module of a component (with binaryen) so the host can hold it to its
 * limits, deterministically, without recompiling per invocation:
 * - fuel: binaryen's `log-execution` pass puts a hook at every function entry, loop header and
 *   return; the hook becomes an inlined decrement of the imported `skein:meter` `fuel` global
 *   that calls `skein:meter` `exhausted` below zero. The count depends only on the code and its
 *   input, so a replay meets the same outcome.
 * - memory: `instrument-memory` (restricted to `memory.grow`) routes every grow through
 *   `skein:meter` `grow_pre` / `grow_post`, where the host counts pages over all memories.
 * - tables: each defined table becomes an import (`skein:limits` `table<N>`), so every
 *   invocation supplies it with its maximum patched down to `tableElements`.
 * - memory: a defined memory becomes an import (`skein:limits` `memory`) of the same limits, so
 *   the host can hand an invocation a recycled memory, zeroed, in place of a freshly mapped one
 *   (instantiation then writes the data segments into it, as into a new memory).
 * Runs in a preparation worker thread (binaryen is big and the rewrite takes seconds).
 */
import type binaryenModule from 'binaryen';

type Binaryen = typeof binaryenModule;
type BinaryenModule = InstanceType<Binaryen['Module']>;

/** Wasm page size: memory is counted and granted in whole pages. */
export const WASM_PAGE_BYTES = 65_536;

/** Import module names the host reserves; a guest module importing from them is refused. */
export const METER_MODULE = 'skein:meter';
export const LIMITS_MODULE = 'skein:limits';

/** A table the host supplies per invocation. */
export interface TableSpec {
  /** Import name under `skein:limits`. */
  name: string;
  initial: number;
  /** The module's own maximum (null: none). */
  maximum: number | null;
}

/** A rewritten core module and what the host must count or supply for it. */
export interface InstrumentedModule {
  bytes: Uint8Array;
  /** Initial pages of the memory the module defines (0 when it defines none). */
  memoryPages: number;
  /** The memory the module defined, now imported from the host (null: it defines none). */
  memory: MemorySpec | null;
  tables: TableSpec[];
}

/** A memory the host supplies per invocation (import `skein:limits` `memory`). */
export interface MemorySpec {
  initial: number;
  /** The module's own maximum in pages (null: none). */
  maximum: number | null;
}

/** Import name, under {@link LIMITS_MODULE}, of a module's own memory. */
export const MEMORY_IMPORT = 'memory';

const FUEL = 'skein$fuel';
const EXHAUSTED = 'skein$exhausted';
const GROW_HOOKS = new Set(['memory_grow_pre', 'memory_grow_post']);
// What `instrument-memory` imports besides the grow hooks; unused once only `memory.grow` is instrumented.
const UNUSED_HOOKS = new Set([
  'load_ptr',
  'load_val_i32',
  'load_val_i64',
  'load_val_f32',
  'load_val_f64',
  'store_ptr',
  'store_val_i32',
  'store_val_i64',
  'store_val_f32',
  'store_val_f64',
]);

/** The Wasm features Node 20's V8 runs (extended-const once the flag is set), and no others. */
function features(b: Binaryen): number {
  const F = b.Features;
  return (
    F.MutableGlobals |
    F.NontrappingFPToInt |
    F.SIMD128 |
    F.BulkMemory |
    F.BulkMemoryOpt |
    F.SignExt |
    F.ReferenceTypes |
    F.Multivalue |
    F.ExtendedConst |
    F.TailCall
  );
}

/** Rewrite `bytes`; throws when the module reaches into the host's reserved imports. */
export function instrumentModule(b: Binaryen, bytes: Uint8Array): InstrumentedModule {
  const module = b.readBinary(bytes);
  try {
    module.setFeatures(features(b));
    refuseReservedImports(b, module);
    meterFuel(b, module);
    hookMemoryGrow(b, module);
    const memoryPages = definedMemoryPages(module);
    const memory = importMemory(b, module);
    const tables = importTables(b, module);
    return { bytes: module.emitBinary(), memoryPages, memory, tables };
  } finally {
    module.dispose();
  }
}

function functionImports(
  b: Binaryen,
  module: BinaryenModule,
): { name: string; module: string; base: string }[] {
  const found: { name: string; module: string; base: string }[] = [];
  for (let i = 0; i < module.getNumFunctions(); i++) {
    const info = b.getFunctionInfo(module.getFunctionByIndex(i));
    if (info.module) found.push({ name: info.name, module: info.module, base: info.base ?? '' });
  }
  return found;
}

function refuseReservedImports(b: Binaryen, module: BinaryenModule): void {
  const reserved = (from: string | null, base: string | null) =>
    from === METER_MODULE ||
    from === LIMITS_MODULE ||
    (from === 'env' &&
      (GROW_HOOKS.has(base ?? '') || UNUSED_HOOKS.has(base ?? '') || base === 'log_execution'));
  const hits = functionImports(b, module).filter((f) => reserved(f.module, f.base));
  for (let i = 0; i < module.getNumGlobals(); i++) {
    const info = b.getGlobalInfo(module.getGlobalByIndex(i));
    if (reserved(info.module, info.base))
      hits.push({ name: info.name, module: info.module ?? '', base: info.base ?? '' });
  }
  if (hits.length > 0) {
    const names = hits.map((h) => `${h.module}.${h.base}`).join(', ');
    throw new Error(`a core module imports names the host reserves (${names})`);
  }
}

function meterFuel(b: Binaryen, module: BinaryenModule): void {
  b.clearPassArguments();
  module.runPasses(['log-execution']);
  const hook = functionImports(b, module).find((f) => f.base === 'log_execution');
  if (hook === undefined) return; // no code to meter
  module.addGlobalImport(FUEL, METER_MODULE, 'fuel', b.i64, true);
  module.addFunctionImport(EXHAUSTED, METER_MODULE, 'exhausted', b.none, b.none);
  module.removeFunction(hook.name);
  const fuel = () => module.global.get(FUEL, b.i64);
  module.addFunction(
    hook.name,
    b.i32,
    b.none,
    [],
    module.block(null, [
      module.global.set(FUEL, module.i64.sub(fuel(), module.i64.const(1n))),
      module.if(module.i64.lt_s(fuel(), module.i64.const(0n)), module.call(EXHAUSTED, [], b.none)),
    ]),
  );
  const before = b.getAlwaysInlineMaxSize();
  b.setAlwaysInlineMaxSize(32);
  try {
    module.runPasses(['inlining']);
  } finally {
    b.setAlwaysInlineMaxSize(before);
  }
}

function hookMemoryGrow(b: Binaryen, module: BinaryenModule): void {
  b.setPassArgument('instrument-memory', 'memory.grow');
  try {
    module.runPasses(['instrument-memory']);
  } finally {
    b.clearPassArguments();
  }
  for (const hook of functionImports(b, module)) {
    if (hook.module !== 'env') continue;
    if (UNUSED_HOOKS.has(hook.base)) module.removeFunction(hook.name);
    if (!GROW_HOOKS.has(hook.base)) continue;
    module.removeFunction(hook.name);
    module.addFunctionImport(hook.name, METER_MODULE, hook.base, b.createType([b.i32, b.i32]), b.i32);
  }
}

function definedMemoryPages(module: BinaryenModule): number {
  if (!module.hasMemory()) return 0;
  const info = module.getMemoryInfo();
  if (info.is64 || info.shared) throw new Error('a core module has a 64-bit or shared memory');
  return info.module ? 0 : info.initial;
}

function importMemory(b: Binaryen, module: BinaryenModule): MemorySpec | null {
  if (!module.hasMemory()) return null;
  const info = module.getMemoryInfo();
  if (info.module) return null;
  module.addMemoryImport(memoryName(b, module), LIMITS_MODULE, MEMORY_IMPORT);
  const imported = module.getMemoryInfo();
  if (imported.module !== LIMITS_MODULE || imported.initial !== info.initial || imported.max !== info.max) {
    throw new Error('its memory cannot be made an import');
  }
  return { initial: info.initial, maximum: info.max ?? null };
}

/** Internal name of the module's one memory: its export's target, else binaryen's default for index 0. */
function memoryName(b: Binaryen, module: BinaryenModule): string {
  for (let i = 0; i < module.getNumExports(); i++) {
    const info = b.getExportInfo(module.getExportByIndex(i));
    if (info.kind === b.ExternalMemory) return info.value;
  }
  return '0';
}

function importTables(b: Binaryen, module: BinaryenModule): TableSpec[] {
  const specs: TableSpec[] = [];
  for (let i = 0; i < module.getNumTables(); i++) {
    const ref = module.getTableByIndex(i);
    const info = b.getTableInfo(ref);
    if (info.module) continue;
    if (tableType(b, ref) !== b.funcref) throw new Error(`table ${info.name} does not hold functions`);
    const name = `table${specs.length}`;
    module.addTableImport(info.name, LIMITS_MODULE, name);
    specs.push({ name, initial: info.initial, maximum: info.max ?? null });
  }
  return specs;
}

function tableType(b: Binaryen, ref: number): number {
  // binaryen.js has the C API for a table's element type but no typed wrapper for it.
  return (b as unknown as { _BinaryenTableGetType(table: number): number })._BinaryenTableGetType(ref);
}
