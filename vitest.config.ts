import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const packagesDir = fileURLToPath(new URL('./packages/', import.meta.url));
// Tests import every package from its source, so `pnpm test` needs no build step.
const alias = Object.fromEntries(
  readdirSync(packagesDir).map((name) => [`@skein/${name}`, `${packagesDir}${name}/src/index.ts`]),
);

export default defineConfig({
  resolve: { alias },
  test: {
    include: ['packages/*/test/**/*.test.ts', 'examples/**/*.test.ts', 'bench/**/*.test.ts'],
    exclude: ['**/node_modules/**', '**/*.alone.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Under CI the run also writes a JSON summary that .ci/run turns into its closing line.
    reporters: process.env.CI ? ['default', 'json'] : ['default'],
    outputFile: process.env.CI ? { json: '.ci-results.json' } : undefined,
    projects: [
      { extends: true, test: { name: 'default' } },
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
