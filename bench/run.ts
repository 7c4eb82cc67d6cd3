/**
 * `pnpm bench` runs every benchmark and prints markdown tables; results go to
 * bench/results/*.json. `pnpm bench:smoke` runs tiny counts only, to prove the bench works.
 */
import { report } from './report.js';
import {
  PG_URL,
  postgresCore,
  postgresFullSizes,
  postgresSmokeSizes,
  postgresUnreachable,
} from './scenarios/postgres-core.js';
import { fullSizes, smokeSizes, sqliteCore } from './scenarios/sqlite-core.js';
import { listFullSizes, listSmokeSizes, sqliteList } from './scenarios/sqlite-list.js';
import { supervision, supervisionFullSizes, supervisionSmokeSizes } from './scenarios/supervision.js';

const smoke = process.argv.includes('--smoke');
const rows = await sqliteCore(smoke ? smokeSizes : fullSizes);
report(smoke ? 'sqlite-core-smoke' : 'sqlite-core', rows, { smoke });
report(
  smoke ? 'sqlite-list-smoke' : 'sqlite-list',
  await sqliteList(smoke ? listSmokeSizes : listFullSizes),
  {
    smoke,
  },
);
const supervisionRows = await supervision(smoke ? supervisionSmokeSizes : supervisionFullSizes);
report(smoke ? 'supervision-smoke' : 'supervision', supervisionRows, { smoke });

const unreachable = await postgresUnreachable();
if (unreachable === undefined) {
  const pgRows = await postgresCore(smoke ? postgresSmokeSizes : postgresFullSizes);
  report(smoke ? 'postgres-core-smoke' : 'postgres-core', pgRows, {
    smoke,
    url: PG_URL.replace(/:[^:@/]*@/, ':***@'),
  });
} else if (process.env.CI === 'true') {
  throw new Error(`bench: PostgreSQL is not reachable at ${PG_URL}: ${unreachable}`);
} else {
  console.warn(
    `\n!!! bench: PostgreSQL is NOT reachable at ${PG_URL} (${unreachable}): postgres-core SKIPPED !!!\n`,
  );
}
