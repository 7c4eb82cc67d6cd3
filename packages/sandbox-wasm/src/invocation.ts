/**
 * One invocation, inside a sandbox worker thread: a fresh instance of every core module (from
 * the compiled modules, so only instantiation is paid), the host's `log`, the meters, and the
 * outcome classified into the sandbox's error codes. Nothing of one invocation survives into
 * the next: every instance and table is created for it and dropped after it, and each memory is
 * either created for it or a memory of an earlier invocation that did not grow, zero-filled
 * before it is handed out, so the instance sees exactly what a new memory holds (zeros, then its
 * data segments, which instantiation writes).
 */
import { SandboxErrorCodes, type SandboxErrorData } from './codes.js';
import {
  LIMITS_MODULE,
  MEMORY_IMPORT,
  METER_MODULE,
  type MemorySpec,
  WASM_PAGE_BYTES,
} from './instrument.js';
import type { SandboxLimits } from './limits.js';
import type { PreparedModule } from './prepare.js';
import type { InvocationOutcome } from './protocol.js';

/** The `instantiate` jco generates for a component in synchronous instantiation mode. */
export type GlueInstantiate = (
  getCoreModule: (name: string) => WebAssembly.Module,
  imports: Record<string, Record<string, unknown>>,
  instantiateCore: (module: WebAssembly.Module, imports?: WebAssembly.Imports) => WebAssembly.Instance,
) => { evaluate(input: string): unknown };

/** A component as a worker holds it: its glue's `instantiate` and its compiled modules. */
export interface LoadedComponent {
  instantiate: GlueInstantiate;
  modules: Record<string, PreparedModule>;
  byModule: Map<WebAssembly.Module, PreparedModule>;
  memories: SpareMemories;
}

/** Spare memories kept per core module (one per instantiation of it in an invocation). */
const SPARES_PER_MODULE = 2;

/**
 * Memories of finished invocations, kept for the next ones in a thread. A newly created memory
 * costs a fresh mapping and a page fault on every page its data segments fill (1.4 MiB for the
 * QuickJS module); a kept one is already mapped. Only a memory still at its initial size is
 * kept (a grown one cannot shrink back), and it is zero-filled before it is handed out again.
 */
export class SpareMemories {
  private readonly clean = new Map<PreparedModule, WebAssembly.Memory[]>();
  private dirty: { prepared: PreparedModule; memory: WebAssembly.Memory }[] = [];

  /** A memory of `spec` for an instance of `prepared`: zeroed, at its initial size. */
  take(prepared: PreparedModule, spec: MemorySpec): WebAssembly.Memory {
    const kept = this.clean.get(prepared)?.pop();
    if (kept !== undefined) return kept;
    const index = this.dirty.findIndex((spare) => spare.prepared === prepared);
    if (index !== -1) {
      const { memory } = this.dirty.splice(index, 1)[0]!;
      new Uint8Array(memory.buffer).fill(0);
      return memory;
    }
    const { initial, maximum } = spec;
    return new WebAssembly.Memory(maximum === null ? { initial } : { initial, maximum });
  }

  /** Keep `memory` after its invocation, unless it grew or enough are kept. */
  give(prepared: PreparedModule, spec: MemorySpec, memory: WebAssembly.Memory): void {
    if (memory.buffer.byteLength !== spec.initial * WASM_PAGE_BYTES) return;
    const kept =
      (this.clean.get(prepared)?.length ?? 0) + this.dirty.filter((d) => d.prepared === prepared).length;
    if (kept < SPARES_PER_MODULE) this.dirty.push({ prepared, memory });
  }

  /** Zero-fill the memories given back; the worker calls this once it has answered. */
  scrub(): void {
    for (const { prepared, memory } of this.dirty) {
      new Uint8Array(memory.buffer).fill(0);
      const list = this.clean.get(prepared);
      if (list === undefined) this.clean.set(prepared, [memory]);
      else list.push(memory);
    }
    this.dirty = [];
  }
}

const MAX_REASON = 1_000;

/** Thrown by a host hook to stop the guest; carries the breach. */
class Breach extends Error {
  constructor(readonly data: SandboxErrorData) {
    super(data.code);
  }
}

/** Per-invocation accounting, shared by every hook of the invocation. */
class Meters {
  readonly fuel: WebAssembly.Global;
  readonly logs: string[] = [];
  /** Tables whose maximum the limit patched down (below the module's own). */
  readonly patchedTables: { table: WebAssembly.Table; maximum: number }[] = [];
  /** Memories handed to this invocation's instances, given back to `spares` after it. */
  readonly memories: { prepared: PreparedModule; spec: MemorySpec; memory: WebAssembly.Memory }[] = [];
  pagesLeft: number;
  memoryRefused = false;
  breach: SandboxErrorData | undefined;
  private logBytes = 0;
  private instances = 0;
  private pendingPages = 0;

  /** The `skein:meter` imports of every instrumented core module. */
  readonly meter: Record<string, unknown>;

  constructor(
    private readonly limits: Required<SandboxLimits>,
    private readonly spares: SpareMemories,
  ) {
    this.fuel = new WebAssembly.Global({ value: 'i64', mutable: true }, BigInt(limits.fuel));
    this.pagesLeft = Math.floor(limits.memoryBytes / WASM_PAGE_BYTES);
    this.meter = {
      fuel: this.fuel,
      exhausted: () => this.stop({ code: SandboxErrorCodes.FuelExhausted, fuel: limits.fuel }),
      memory_grow_pre: (_site: number, delta: number) => this.growPre(delta),
      memory_grow_post: (_site: number, result: number) => this.growPost(result),
    };
  }

  private growPre(delta: number): number {
    const pages = delta >>> 0;
    if (pages > this.pagesLeft) {
      this.memoryRefused = true;
      this.pendingPages = 0;
      return -1; // a grow by 2^32-1 pages always fails: memory.grow answers -1
    }
    this.pendingPages = pages;
    return delta;
  }

  private growPost(result: number): number {
    if (result !== -1) this.pagesLeft -= this.pendingPages;
    this.pendingPages = 0;
    return result;
  }

  stop(data: SandboxErrorData): never {
    this.breach ??= data;
    throw new Breach(data);
  }

  fuelUsed(): number {
    const left = this.fuel.value as bigint;
    return this.limits.fuel - Number(left < 0n ? 0n : left);
  }

  log(message: unknown): void {
    if (typeof message !== 'string')
      this.stop({ code: SandboxErrorCodes.Trap, reason: 'log was called without a string' });
    if (this.logs.length + 1 > this.limits.maxLogs) {
      this.stop({ code: SandboxErrorCodes.LogLimit, limit: 'maxLogs', value: this.limits.maxLogs });
    }
    const bytes = Buffer.byteLength(message, 'utf8');
    if (this.logBytes + bytes > this.limits.maxLogBytes) {
      this.stop({ code: SandboxErrorCodes.LogLimit, limit: 'maxLogBytes', value: this.limits.maxLogBytes });
    }
    this.logBytes += bytes;
    this.logs.push(message);
  }

  /** Instantiate one core module within the limits; the glue calls this for each. */
  instantiate(
    prepared: PreparedModule | undefined,
    module: WebAssembly.Module,
    imports: WebAssembly.Imports,
  ) {
    if (prepared === undefined) this.stop({ code: SandboxErrorCodes.Trap, reason: 'an unknown core module' });
    const { limits } = this;
    if (++this.instances > limits.instances) {
      this.stop({ code: SandboxErrorCodes.MemoryLimit, limit: 'instances', value: limits.instances });
    }
    if (prepared.memoryPages > this.pagesLeft) {
      this.memoryRefused = true;
      this.stop({ code: SandboxErrorCodes.MemoryLimit, limit: 'memoryBytes', value: limits.memoryBytes });
    }
    this.pagesLeft -= prepared.memoryPages;
    const tables: Record<string, WebAssembly.Table> = {};
    for (const spec of prepared.tables) {
      if (spec.initial > limits.tableElements) {
        this.stop({
          code: SandboxErrorCodes.MemoryLimit,
          limit: 'tableElements',
          value: limits.tableElements,
        });
      }
      const own = spec.maximum ?? Number.POSITIVE_INFINITY;
      const maximum = Math.min(own, limits.tableElements);
      const table = new WebAssembly.Table({ element: 'anyfunc', initial: spec.initial, maximum });
      if (maximum < own) this.patchedTables.push({ table, maximum });
      tables[spec.name] = table;
    }
    const supplied: Record<string, WebAssembly.Table | WebAssembly.Memory> = tables;
    if (prepared.memory !== null) {
      const memory = this.spares.take(prepared, prepared.memory);
      this.memories.push({ prepared, spec: prepared.memory, memory });
      supplied[MEMORY_IMPORT] = memory;
    }
    return new WebAssembly.Instance(module, {
      ...imports,
      [METER_MODULE]: this.meter,
      [LIMITS_MODULE]: supplied,
    });
  }

  /** Give this invocation's memories back for the next ones. */
  release(): void {
    for (const { prepared, spec, memory } of this.memories) this.spares.give(prepared, spec, memory);
  }

  /** What a failed invocation ran into. */
  classify(error: unknown): SandboxErrorData {
    if (this.breach !== undefined) return this.breach;
    if (error instanceof Breach) return error.data;
    if (this.memoryRefused) {
      return { code: SandboxErrorCodes.MemoryLimit, limit: 'memoryBytes', value: this.limits.memoryBytes };
    }
    if (this.patchedTables.some(({ table, maximum }) => table.length >= maximum)) {
      return {
        code: SandboxErrorCodes.MemoryLimit,
        limit: 'tableElements',
        value: this.limits.tableElements,
      };
    }
    if (typeof error === 'string') return { code: SandboxErrorCodes.EvaluatorError, reason: clip(error) };
    const reason = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
    return { code: SandboxErrorCodes.Trap, reason: clip(reason) };
  }
}

function clip(text: string): string {
  return text.length > MAX_REASON ? `${text.slice(0, MAX_REASON)}…` : text;
}

/** Run `input` through a fresh instance of `component` under `limits`. */
export function invoke(
  component: LoadedComponent,
  input: string,
  limits: Required<SandboxLimits>,
): InvocationOutcome {
  const startedAt = performance.timeOrigin + performance.now();
  const meters = new Meters(limits, component.memories);
  const usage = () => ({
    logs: meters.logs,
    fuelUsed: meters.fuelUsed(),
    startedAt,
    endedAt: performance.timeOrigin + performance.now(),
  });
  try {
    const instance = component.instantiate(
      (name) => {
        const prepared = component.modules[name];
        if (prepared === undefined) throw new Error(`the glue asked for an unknown core module ${name}`);
        return prepared.module;
      },
      { log: { default: (message: unknown) => meters.log(message) } },
      (module, imports = {}) => meters.instantiate(component.byModule.get(module), module, imports),
    );
    const output = instance.evaluate(input);
    if (typeof output !== 'string') {
      return {
        ok: false,
        error: { code: SandboxErrorCodes.Trap, reason: 'evaluate returned no string' },
        ...usage(),
      };
    }
    return { ok: true, output, ...usage() };
  } catch (error) {
    return { ok: false, error: meters.classify(error), ...usage() };
  } finally {
    meters.release();
  }
}
