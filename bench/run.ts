/**
 * `pnpm bench` runs every benchmark and prints markdown tables; results go to
 * bench/results/*.json. `pnpm bench:smoke` runs tiny counts only, to prove the bench works.
 */
import { report } from './report.js';
import { fullSizes, smokeSizes, sqliteCore } from './scenarios/sqlite-core.js';

const smoke = process.argv.includes('--smoke');
const rows = await sqliteCore(smoke ? smokeSizes : fullSizes);
report(smoke ? 'sqlite-core-smoke' : 'sqlite-core', rows, { smoke });
