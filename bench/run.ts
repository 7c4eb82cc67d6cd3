/**
 * Every benchmark: `pnpm bench` starts this file through bench/main.mjs, which points
 * `@skein/*` at the built packages (`--src`: at their TypeScript sources). It prints markdown
 * tables; results go to bench/results/*.json. `pnpm bench:smoke` runs tiny counts only, to
 * prove the bench works. `--only a,b` runs the suites (and, in `peers` and `counts`, the
 * engines) tagged with any of the names, e.g. `--only sqlite`, `--only postgres`,
 * `--only peers`, `--only memory`, `--only sandbox`, `--only build`, `--only queues`, `--only outbox`,
 * `--only fanout`, `--only fanout-statements`, `--only fanout-cpu`, `--only streams`, `--only continue`, `--only drain` (the
 * plain queue drain of `postgres-core` alone, in rounds, with its statements by name)
 * (RabbitMQ at SKEIN_AMQP_URL; skipped loudly without it, a failure under CI=true).
 * PostgreSQL is at SKEIN_PG_URL (default: the local server); without it the PostgreSQL parts
 * are skipped loudly, except under CI=true, where that is a failure.
 */
import { loadavg } from 'node:os';
import { dbos } from './engines/dbos.js';
import type { EngineSpec } from './engines/engine.js';
import { rawPostgres } from './engines/raw-postgres.js';
import { rawSqlite } from './engines/raw-sqlite.js';
import { restate, restateUnavailable } from './engines/restate.js';
import { skeinPostgres } from './engines/skein-postgres.js';
import { skeinSqlite } from './engines/skein-sqlite.js';
import { report, saveResults } from './report.js';
import { buildFullSizes, buildSmokeSizes, buildVsSrc } from './scenarios/build-vs-src.js';
import { continueAsNew } from './scenarios/continue-as-new.js';
import { drain, drainFullSizes, drainSmokeSizes } from './scenarios/drain.js';
import { executorFullSizes, executorSmokeSizes, executors } from './scenarios/executors.js';
import { fanOut, fanOutFullSizes, fanOutSmokeSizes } from './scenarios/fan-out.js';
import { fanOutCpu } from './scenarios/fan-out-cpu.js';
import { fanOutStatements } from './scenarios/fan-out-statements.js';
import { loadStateCost } from './scenarios/load-state-cost.js';
import { memory } from './scenarios/memory.js';
import { AMQP_URL, amqpUnreachable, outbox, outboxFullSizes, outboxSmokeSizes } from './scenarios/outbox.js';
import { peers, peersFullSizes, peersSmokeSizes } from './scenarios/peers.js';
import { peerTable, peerTargets } from './scenarios/peers-table.js';
import {
  PG_URL,
  postgresCore,
  postgresFullSizes,
  postgresSmokeSizes,
  postgresUnreachable,
} from './scenarios/postgres-core.js';
import { postgresCpu } from './scenarios/postgres-cpu.js';
import { queueFullSizes, queueSmokeSizes, queues } from './scenarios/queues.js';
import { resumeCost } from './scenarios/resume-cost.js';
import { sandbox, sandboxFullSizes, sandboxSmokeSizes } from './scenarios/sandbox.js';
import { fullSizes, smokeSizes, sqliteCore } from './scenarios/sqlite-core.js';
import { listFullSizes, listSmokeSizes, sqliteList } from './scenarios/sqlite-list.js';
import { type Counts, countPostgres, countSqlite, countsTable } from './scenarios/statement-counts.js';
import { stepCost, stepCostFullSizes, stepCostSmokeSizes } from './scenarios/step-cost.js';
import { streamFullSizes, streamSmokeSizes, streams } from './scenarios/streams.js';
import { supervision, supervisionFullSizes, supervisionSmokeSizes } from './scenarios/supervision.js';

const smoke = process.argv.includes('--smoke');
const onlyAt = process.argv.indexOf('--only');
const only = onlyAt < 0 ? [] : (process.argv[onlyAt + 1] ?? '').split(',').filter(Boolean);
const picked = (tags: readonly string[]) => only.length === 0 || tags.some((tag) => only.includes(tag));
const suffix = smoke ? '-smoke' : '';
const safeUrl = PG_URL.replace(/:[^:@/]*@/, ':***@');
/** `dist` (the built packages) or `src` (`--src`), set by bench/main.mjs; plain `tsx bench/run.ts` runs `src`. */
const mode = process.env.SKEIN_BENCH_MODE ?? 'src';
console.error(
  `bench: measuring the ${mode === 'dist' ? 'built packages (dist)' : 'TypeScript sources (src)'}`,
);

const unreachable = await postgresUnreachable();
if (unreachable !== undefined && process.env.CI === 'true') {
  throw new Error(`bench: PostgreSQL is not reachable at ${PG_URL}: ${unreachable}`);
}
const pgUp = unreachable === undefined;
function skipped(what: string): void {
  console.warn(
    `\n!!! bench: PostgreSQL is NOT reachable at ${PG_URL} (${unreachable}): ${what} SKIPPED !!!\n`,
  );
}

/** The engines of a multi-engine suite that `--only` picked (the suite's own name picks them all). */
function engines(suite: string, specs: readonly EngineSpec[]): EngineSpec[] {
  const chosen = specs.filter((spec) => only.includes(suite) || picked(spec.tags));
  if (!pgUp && chosen.some((spec) => spec.store === 'postgres')) skipped(`${suite} on PostgreSQL`);
  return chosen.filter((spec) => pgUp || spec.store !== 'postgres');
}

if (picked(['build'])) {
  report(`build${suffix}`, await buildVsSrc(smoke ? buildSmokeSizes : buildFullSizes), { smoke });
}
if (picked(['sqlite-core', 'sqlite', 'core'])) {
  report(`sqlite-core${suffix}`, await sqliteCore(smoke ? smokeSizes : fullSizes), { smoke, mode });
}
if (picked(['step-cost', 'sqlite', 'sqlite-core'])) {
  report(`step-cost${suffix}`, await stepCost(smoke ? stepCostSmokeSizes : stepCostFullSizes), {
    smoke,
    mode,
  });
}
if (picked(['sqlite-list', 'sqlite', 'list'])) {
  report(`sqlite-list${suffix}`, await sqliteList(smoke ? listSmokeSizes : listFullSizes), { smoke });
}
if (picked(['executors'])) {
  report(`executors${suffix}`, await executors(smoke ? executorSmokeSizes : executorFullSizes), { smoke });
}

if (picked(['supervision', 'sqlite'])) {
  const rows = await supervision(smoke ? supervisionSmokeSizes : supervisionFullSizes);
  report(`supervision${suffix}`, rows, { smoke });
}
if (picked(['postgres-core', 'postgres', 'core'])) {
  if (pgUp) {
    const rows = await postgresCore(smoke ? postgresSmokeSizes : postgresFullSizes);
    rows.push(...(await postgresCpu(smoke ? 200 : 5000, PG_URL)));
    report(`postgres-core${suffix}`, rows, { smoke, url: safeUrl, mode });
  } else skipped('postgres-core');
}
if (only.includes('drain')) {
  if (pgUp) {
    const rows = await drain(smoke ? drainSmokeSizes : drainFullSizes);
    report(`drain${suffix}`, rows, { smoke, url: safeUrl, mode, load: loadavg() });
  } else skipped('drain');
}
if (picked(['queues', 'postgres'])) {
  if (pgUp) {
    const rows = await queues(smoke ? queueSmokeSizes : queueFullSizes);
    report(`queues${suffix}`, rows, { smoke, url: safeUrl, mode, load: loadavg() });
  } else skipped('queues');
}

/** Restate, when its server binary is installed (it ships in its npm package); loudly skipped otherwise, a failure under CI=true. */
function restatePeer(): EngineSpec[] {
  const why = restateUnavailable();
  if (why === undefined) return [restate];
  if (process.env.CI === 'true') throw new Error(`bench: Restate cannot run: ${why}`);
  console.warn(`\n!!! bench: Restate cannot run (${why}): Restate SKIPPED !!!\n`);
  return [];
}

const peerEngines = engines('peers', [
  rawSqlite('full', 1),
  rawSqlite('full', 100),
  rawSqlite('normal', 1),
  rawSqlite('normal', 100),
  skeinSqlite('full'),
  skeinSqlite('normal'),
  rawPostgres(1),
  rawPostgres(8),
  skeinPostgres,
  dbos,
  ...restatePeer(),
]);
if (picked(['peers', 'sqlite', 'postgres', 'dbos', 'restate', 'skein', 'limit']) && peerEngines.length > 0) {
  const cells = await peers(peerEngines, smoke ? peersSmokeSizes : peersFullSizes);
  console.log(`\n### peers${suffix}\n\n${peerTable(cells)}`);
  report(`peers${suffix}-targets`, peerTargets(cells), { smoke, url: safeUrl });
  saveResults(`peers${suffix}`, { meta: { smoke, url: safeUrl }, cells });
}

const countEngines = engines('counts', [skeinSqlite('full'), skeinPostgres, dbos]);
if (picked(['counts', 'sqlite', 'postgres', 'dbos', 'skein']) && countEngines.length > 0) {
  const runs = smoke ? 3 : 100;
  const counts: Counts[] = [];
  for (const spec of countEngines) {
    counts.push(...(await (spec.store === 'postgres' ? countPostgres(spec, runs) : countSqlite(spec, runs))));
  }
  console.log(`\n### counts${suffix} (per workflow, ${runs} sequential runs)\n\n${countsTable(counts)}`);
  saveResults(`counts${suffix}`, { meta: { smoke, runs }, counts });
}

if (picked(['memory', 'sqlite'])) {
  report(`memory${suffix}`, await memory(smoke ? 200 : 100_000), { smoke, mode });
}
if (picked(['load-state', 'sqlite'])) {
  const rows = await loadStateCost(smoke ? [100, 1000] : [100, 1000, 10_000], smoke ? 3 : 30);
  report(`load-state${suffix}`, rows, { smoke });
}
if (picked(['resume'])) {
  report(`resume${suffix}`, await resumeCost(smoke ? [20, 100] : [1_000, 10_000]), { smoke });
}
if (picked(['continue'])) {
  report(`continue${suffix}`, await continueAsNew(smoke ? 20 : 600, smoke ? 5 : 100, smoke ? 1 : 3), {
    smoke,
  });
}
if (picked(['streams'])) {
  if (!pgUp) skipped('streams on PostgreSQL');
  report(`streams${suffix}`, await streams(smoke ? streamSmokeSizes : streamFullSizes, pgUp), { smoke });
}
if (picked(['sandbox'])) {
  report(`sandbox${suffix}`, await sandbox(smoke ? sandboxSmokeSizes : sandboxFullSizes), { smoke });
}
if (picked(['fanout-statements']) && only.length > 0 && !only.includes('fanout')) {
  if (pgUp) report(`fanout-statements${suffix}`, await fanOutStatements(smoke ? 1_000 : 10_000), { smoke });
  else skipped('fan-out statement counts');
}
if (picked(['fanout-cpu']) && only.length > 0 && !only.includes('fanout')) {
  if (pgUp)
    report(`fanout-cpu${suffix}`, await fanOutCpu(smoke ? 1_000 : 100_000), { smoke, load: loadavg() });
  else skipped('fan-out CPU per item');
}
if (picked(['fanout'])) {
  const broker = await amqpUnreachable();
  if (broker !== undefined && process.env.CI === 'true')
    throw new Error(`bench: RabbitMQ is not reachable at ${AMQP_URL}: ${broker}`);
  if (broker !== undefined)
    console.warn(`\n!!! bench: RabbitMQ is NOT reachable (${broker}): fan-out on PostgreSQL SKIPPED !!!\n`);
  if (!pgUp) skipped('fan-out on PostgreSQL');
  const rows = pgUp ? await fanOutStatements(smoke ? 1_000 : 10_000) : [];
  rows.push(...(await fanOut(smoke ? fanOutSmokeSizes : fanOutFullSizes, pgUp, broker === undefined)));
  report(`fanout${suffix}`, rows, { smoke, load: loadavg() });
}
if (picked(['outbox', 'rabbitmq'])) {
  const broker = await amqpUnreachable();
  if (broker !== undefined && process.env.CI === 'true')
    throw new Error(`bench: RabbitMQ is not reachable at ${AMQP_URL}: ${broker}`);
  if (broker === undefined) {
    if (!pgUp) skipped('outbox on PostgreSQL');
    const rows = await outbox(smoke ? outboxSmokeSizes : outboxFullSizes, pgUp);
    report(`outbox${suffix}`, rows, { smoke });
  } else console.warn(`\n!!! bench: RabbitMQ is NOT reachable (${broker}): outbox SKIPPED !!!\n`);
}
