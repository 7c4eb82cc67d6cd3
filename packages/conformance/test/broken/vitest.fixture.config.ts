/** Runs only the broken-store fixture (from the repo root), with the workspace's aliases. */
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import root from '../../../../vitest.config.js';

export default defineConfig({
  root: fileURLToPath(new URL('../../../../', import.meta.url)),
  resolve: root.resolve,
  test: {
    include: ['packages/conformance/test/broken/broken-stores.fixture.ts'],
    pool: 'forks',
    testTimeout: 30_000,
  },
});
