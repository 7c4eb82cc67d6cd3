import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const packagesDir = fileURLToPath(new URL('./packages/', import.meta.url));
// Tests import every package from its source, so `pnpm test` needs no build step.
const packages = readdirSync(packagesDir, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);
// The subpaths first: `@skein/workflow-runtime/spi` is src/index-spi.ts.
const alias = [
  ...['spi', 'internal'].map((entry) => ({
    find: `@skein/workflow-runtime/${entry}`,
    replacement: `${packagesDir}workflow-runtime/src/index-${entry}.ts`,
  })),
  ...packages.map((name) => ({ find: `@skein/${name}`, replacement: `${packagesDir}${name}/src/index.ts` })),
];

export default defineConfig({
  resolve: { alias },
  test: {
    exclude: ['**/node_modules/**', '**/*.alone.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Under CI the run also writes a JSON summary that .ci/run turns into its closing line.
    reporters: process.env.CI ? ['default', 'json'] : ['default'],
    outputFile: process.env.CI ? { json: '.ci-results.json' } : undefined,
    // One project per package (`pnpm --filter @skein/<name> test` runs its own), one for the
    // examples and the bench, and the broker-wide cases that run alone.
    projects: [
      ...packages.map((name) => ({
        extends: true as const,
        test: { name, include: [`packages/${name}/test/**/*.test.ts`] },
      })),
      {
        extends: true,
        test: {
          name: 'examples',
          include: ['examples/**/*.test.ts', 'bench/**/*.test.ts', 'scripts/**/*.test.ts'],
        },
      },
      // Broker-wide cases (rabbitmqctl stop_app) cut every connection: they run alone, after the rest.
      {
        resolve: { alias },
        test: {
          name: 'alone',
          include: ['packages/*/test/**/*.alone.test.ts'],
          pool: 'forks',
          fileParallelism: false,
          sequence: { groupOrder: 1 },
          testTimeout: 120_000,
          hookTimeout: 30_000,
        },
      },
    ],
  },
});
