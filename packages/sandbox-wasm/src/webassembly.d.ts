/**
 * The part of the WebAssembly JavaScript API this package uses. Node 20 runs all of it, but
 * @types/node 20 declares no WebAssembly namespace and the project's `lib` has no DOM.
 */
declare namespace WebAssembly {
  type ImportValue = unknown;
  type Imports = Record<string, Record<string, ImportValue>>;
  type ValueType = 'i32' | 'i64' | 'f32' | 'f64' | 'anyfunc' | 'externref';

  class Module {
    constructor(bytes: BufferSource);
  }

  class Instance {
    constructor(module: Module, imports?: Imports);
    readonly exports: Record<string, unknown>;
  }

  class Global {
    constructor(descriptor: { value: ValueType; mutable?: boolean }, value?: unknown);
    value: unknown;
  }

  class Table {
    constructor(descriptor: { element: 'anyfunc' | 'externref'; initial: number; maximum?: number });
    readonly length: number;
  }

  class Memory {
    constructor(descriptor: { initial: number; maximum?: number });
    readonly buffer: ArrayBuffer;
  }

  function validate(bytes: BufferSource): boolean;
  function compile(bytes: BufferSource): Promise<Module>;
}
