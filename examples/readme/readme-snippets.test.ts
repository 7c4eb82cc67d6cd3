/**
 * The package READMEs show code that compiles against the real API: each README's example is
 * the text of `examples/readme/<package>.ts`, which `pnpm typecheck` compiles (and lint
 * checks) with the rest of the repository. Edit the file, then paste it into the README.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const packages = readdirSync(`${root}packages`, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .sort();
const snippets = readdirSync(`${root}examples/readme`)
  .filter((name) => name.endsWith('.ts') && !name.endsWith('.test.ts'))
  .map((name) => name.slice(0, -'.ts'.length))
  .sort();

/** The bodies of the ```ts blocks of a markdown text. */
function tsBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((match) => match[1] ?? '');
}

describe('package READMEs', () => {
  it('every package has a README whose one example is examples/readme/<package>.ts, verbatim', () => {
    for (const name of packages) {
      const readme = readFileSync(`${root}packages/${name}/README.md`, 'utf8');
      const file = readFileSync(`${root}examples/readme/${name}.ts`, 'utf8');
      expect(tsBlocks(readme), `packages/${name}/README.md`).toEqual([file]);
    }
  });

  it('every example in examples/readme belongs to a package', () => {
    expect(snippets).toEqual(packages);
  });

  it("the root README's package table lists every package", () => {
    const readme = readFileSync(`${root}README.md`, 'utf8');
    const listed = [...readme.matchAll(/^\| \[`@skein\/([a-z-]+)`\]\(packages\/\1\/README\.md\) \|/gm)]
      .map((match) => match[1])
      .sort();
    expect(listed).toEqual(packages);
  });
});
