import { defineConfig } from 'tsup';
import base from '../../tsup.base.js';

// The library entry and the `skein` executable (its shebang line is kept by the bundler).
export default defineConfig({ ...base, entry: ['src/index.ts', 'src/bin.ts'] });
