import { defineConfig } from 'tsup';
import base from '../../tsup.base.js';

// Three entry points: `.` for users, `./spi` for store and transport authors, `./internal`
// for what Skein's own packages share.
export default defineConfig({
  ...(base as object),
  entry: { index: 'src/index.ts', spi: 'src/index-spi.ts', internal: 'src/index-internal.ts' },
});
