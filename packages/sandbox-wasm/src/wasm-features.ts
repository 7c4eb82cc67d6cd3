/**
 * Node-version specifics of running transpiled components, set once per thread that compiles
 * or runs them.
 */
import { setFlagsFromString } from 'node:v8';

// (module (global i32 (i32.add (i32.const 1) (i32.const 2)))): valid only with extended-const.
const EXTENDED_CONST_PROBE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x06, 0x09, 0x01, 0x7f, 0x00, 0x41, 0x01, 0x41, 0x02, 0x6a,
  0x0b,
]);

/**
 * Components built by componentize-qjs use Wasm `extended-const` (constant expressions such as
 * `global.get $__memory_base; i32.const N; i32.add`). V8 ships it from Node 22; on Node 20 it is
 * behind `--experimental-wasm-extended-const`, which this sets at run time when the probe fails.
 * V8 flags are process-wide: in a process that loads this package the feature is on for every
 * thread. Nothing is set where Node already validates the probe.
 */
export function enableExtendedConst(): void {
  if (WebAssembly.validate(EXTENDED_CONST_PROBE)) return;
  setFlagsFromString('--experimental-wasm-extended-const');
  if (!WebAssembly.validate(EXTENDED_CONST_PROBE)) {
    throw new Error(
      `this Node.js (${process.version}) cannot run Wasm extended-const, which components need`,
    );
  }
}

const NO_JSPI = new TypeError('WebAssembly.promising is not available');

/**
 * jco's glue wraps four exports in `WebAssembly.promising` (JSPI) inside try/catch and falls back
 * to the plain export. Where JSPI is missing (Node 20), each fallback is a thrown TypeError whose
 * message V8 builds by re-parsing the glue's 1,300-line instantiation function: about 1 ms each,
 * most of a fresh instance's cost. In sandbox worker threads only, a stand-in throws a prebuilt
 * error instead, so the glue takes the same fallback at no cost.
 */
export function cheapJspiFallback(): void {
  const wasm = WebAssembly as unknown as { promising?: unknown };
  if (typeof wasm.promising === 'function') return;
  wasm.promising = () => {
    throw NO_JSPI;
  };
}
