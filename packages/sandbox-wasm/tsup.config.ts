import { defineConfig } from 'tsup';
import base from '../../tsup.base.js';

// The worker threads' entry is a file of its own: `new Worker(new URL('./worker.js', …))`.
export default defineConfig({ ...base, entry: ['src/index.ts', 'src/worker.ts'] });
