import { defineConfig } from 'tsup';
import base from '../../tsup.base.js';

// The worker threads' entry is a file of its own: `new Worker(new URL('./worker.js', …))`.
// esbuild serves only the run from TypeScript sources (`threads.ts`), so the build leaves it out.
export default defineConfig({ ...base, entry: ['src/index.ts', 'src/worker.ts'], external: ['esbuild'] });
