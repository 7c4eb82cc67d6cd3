/**
 * Which class a recorded error comes back as (adr/0020). The log records each error with the
 * names of its class chain; decoding revives it as the first class of that chain the reader
 * knows: a class the workflow or runtime registered, one of this package's errors (by code),
 * `SkeinError`, or a built-in error. Anything else comes back as a plain `Error`.
 */
import { type ErrorClass, ErrorClassesByCode, InvalidErrorClassError, SkeinError } from './errors.js';

/** Built-in error classes, revived as themselves (the classes `structuredClone` keeps, and AggregateError). */
const BUILT_INS: ReadonlyMap<string, ErrorClass> = new Map<string, ErrorClass>([
  ['Error', Error],
  ['TypeError', TypeError],
  ['RangeError', RangeError],
  ['SyntaxError', SyntaxError],
  ['ReferenceError', ReferenceError],
  ['EvalError', EvalError],
  ['URIError', URIError],
  ['AggregateError', AggregateError],
  ['DOMException', DOMException],
]);

const SKEIN_NAMES: ReadonlyMap<string, ErrorClass> = new Map(
  [SkeinError, ...Object.values(ErrorClassesByCode)].map((errorClass) => [errorClass.name, errorClass]),
);

/** What to revive a recorded error as: its class, and the built-in whose constructor makes it. */
export interface RevivedClass {
  errorClass: ErrorClass;
  /** `Error`, or the nearest built-in ancestor (AggregateError and DOMException take other arguments). */
  intrinsic: ErrorClass;
}

/** The classes one codec revives; see the module comment. */
export class ErrorClassRegistry {
  private readonly registered: ReadonlyMap<string, ErrorClass>;

  /** @param registered classes checked by {@link checkedErrorClasses}; a name given twice is refused. */
  constructor(registered: readonly ErrorClass[], where = 'createRuntime') {
    const byName = new Map<string, ErrorClass>();
    for (const errorClass of checkedErrorClasses(registered, where)) {
      const other = byName.get(errorClass.name);
      if (other !== undefined && other !== errorClass)
        throw new InvalidErrorClassError(errorClass.name, `${where}: two different classes have this name`);
      byName.set(errorClass.name, errorClass);
    }
    this.registered = byName;
  }

  /** The class to revive an error as, from its recorded class chain (most derived first) and code. */
  resolve(chain: readonly string[], code: unknown): RevivedClass {
    for (let i = 0; i < chain.length; i++) {
      const name = chain[i] as string;
      const found = this.registered.get(name) ?? skeinClass(name, code) ?? BUILT_INS.get(name);
      if (found !== undefined) return { errorClass: found, intrinsic: intrinsicOf(chain, i) };
    }
    return { errorClass: Error, intrinsic: Error };
  }
}

function skeinClass(name: string, code: unknown): ErrorClass | undefined {
  if (name === 'SkeinError') return SkeinError;
  const byCode =
    typeof code === 'string' ? ErrorClassesByCode[code as keyof typeof ErrorClassesByCode] : undefined;
  return byCode?.name === name ? byCode : undefined;
}

/** The first built-in at or after `from` in the chain; `Error` when there is none. */
function intrinsicOf(chain: readonly string[], from: number): ErrorClass {
  for (let i = from; i < chain.length; i++) {
    const builtIn = BUILT_INS.get(chain[i] as string);
    if (builtIn !== undefined) return builtIn;
  }
  return Error;
}

/**
 * The names of an error's class chain, most derived first, up to the first built-in or Skein
 * class (every reader knows those, so nothing past one can matter). Anonymous classes are left out.
 */
export function classChain(error: Error): string[] {
  const chain: string[] = [];
  let proto: unknown = Object.getPrototypeOf(error);
  for (let depth = 0; proto !== null && proto !== Object.prototype && depth < 16; depth++) {
    const maker = Object.hasOwn(proto as object, 'constructor')
      ? (proto as { constructor: unknown }).constructor
      : undefined;
    if (typeof maker === 'function' && maker.name !== '') {
      chain.push(maker.name);
      if (BUILT_INS.has(maker.name) || SKEIN_NAMES.has(maker.name)) break;
    }
    proto = Object.getPrototypeOf(proto);
  }
  return chain;
}

/**
 * Check the `errors` option of `defineWorkflow` or `createRuntime`: every entry is a named
 * class of errors whose name is neither a built-in's nor another Skein class's.
 * @param where the call, for the message (e.g. `defineWorkflow("order")`).
 */
export function checkedErrorClasses(errors: unknown, where: string): ErrorClass[] {
  if (!Array.isArray(errors))
    throw new InvalidErrorClassError(String(errors), `${where}: errors must be an array of classes`);
  return errors.map((candidate: unknown, index) => {
    const label =
      typeof candidate === 'function' && candidate.name !== '' ? candidate.name : `errors[${index}]`;
    if (typeof candidate !== 'function' || !(candidate.prototype instanceof Error))
      throw new InvalidErrorClassError(label, `${where}: not a class that extends Error`);
    if (candidate.name === '')
      throw new InvalidErrorClassError(label, `${where}: an anonymous class has no name to record`);
    if (BUILT_INS.has(candidate.name))
      throw new InvalidErrorClassError(
        label,
        `${where}: the name of a built-in error, which is revived as itself`,
      );
    const skein = SKEIN_NAMES.get(candidate.name);
    if (skein !== undefined && skein !== candidate)
      throw new InvalidErrorClassError(label, `${where}: the name of a Skein error class`);
    return candidate as ErrorClass;
  });
}
