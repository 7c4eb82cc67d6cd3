/**
 * The WIT contract between host and guest. A component is accepted only if every import it
 * declares is one the contract offers (with the very same signature) and it exports what the
 * contract requires; anything else (`wasi:*`, another interface, another signature) is refused
 * at load, before any of its code runs.
 */
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';

/** A world the host implements: the imports it offers and the exports it calls. */
export interface SandboxContract {
  /** `package/world`, e.g. `skein:sandbox@0.1.0/evaluator`. */
  readonly world: string;
  /** Import items the guest may declare, as `component wit` prints them. */
  readonly imports: readonly string[];
  /** Export items the guest must declare, as `component wit` prints them. */
  readonly exports: readonly string[];
  /** sha256 (hex) of the contract: its world, imports and exports. Part of every cache key. */
  readonly hash: string;
  /** Path of the WIT package that declares the world (what `buildComponent` builds against). */
  readonly witPath: string;
  /** Name of the world inside the WIT package. */
  readonly worldName: string;
}

function contract(spec: Omit<SandboxContract, 'hash'>): SandboxContract {
  const canonical = JSON.stringify({ world: spec.world, imports: spec.imports, exports: spec.exports });
  return { ...spec, hash: createHash('sha256').update(canonical).digest('hex') };
}

/** The evaluator contract (`wit/evaluator.wit`): the host's `log`, the guest's `evaluate`. */
export const evaluatorContract: SandboxContract = contract({
  world: 'skein:sandbox@0.1.0/evaluator',
  imports: ['import log: func(message: string);'],
  exports: ['export evaluate: func(input: string) -> result<string, string>;'],
  witPath: fileURLToPath(new URL('../wit/evaluator.wit', import.meta.url)),
  worldName: 'evaluator',
});

/** The items of a world as `component wit` prints it: `import …` and `export …` lines. */
export interface WorldItems {
  imports: string[];
  exports: string[];
}

/** Read the import and export items of the root world out of a component's printed WIT. */
export function worldItems(wit: string): WorldItems {
  const items: WorldItems = { imports: [], exports: [] };
  const body = /world\s+root\s*\{([\s\S]*)\}\s*$/.exec(wit.trim())?.[1];
  if (body === undefined) throw new Error('the component has no root world');
  let depth = 0;
  for (const raw of body.split('\n')) {
    const line = raw.trim();
    if (depth === 0 && line.startsWith('import ')) items.imports.push(line);
    if (depth === 0 && line.startsWith('export ')) items.exports.push(line);
    depth += (line.match(/\{/g) ?? []).length - (line.match(/\}/g) ?? []).length;
  }
  return items;
}

/** What in `items` breaks `contract`; empty when the component keeps it. */
export function contractViolations(items: WorldItems, contract: SandboxContract): string[] {
  const violations: string[] = [];
  for (const item of items.imports) {
    if (contract.imports.includes(item)) continue;
    const name = /^import\s+([^\s;:]+(?::[^\s;]+)?)/.exec(item)?.[1] ?? item;
    violations.push(
      name.startsWith('wasi:')
        ? `it imports ${name}; guests get no WASI (no filesystem, network, clock or randomness)`
        : `it imports "${item}", which the ${contract.world} contract does not offer`,
    );
  }
  for (const item of contract.exports) {
    if (items.exports.includes(item)) continue;
    violations.push(`it does not export ${item.replace(/^export\s+/, '').replace(/;$/, '')}`);
  }
  return violations;
}
