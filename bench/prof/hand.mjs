/**
 * The statements of a 1-step execution by hand (as bench/scenarios/sqlite-rounds.ts's floor),
 * 200 executions per transaction at `normal`, on variants of the log's layout, in turns:
 * `rowid` (the schema today), `without-rowid` (the log keyed by (execution_id, seq)),
 * `no-envelope-index` (without the UNIQUE index on envelope_id), `two-row-insert` (a step's
 * two events in one prepared INSERT). Prints the median CPU µs per execution of each
 * (adr/0097). Usage: node bench/prof/hand.mjs [rounds] [executions]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { monotonicFactory } from 'ulid';

const rounds = Number(process.argv[2] ?? 7);
const count = Number(process.argv[3] ?? 20000);
const newId = monotonicFactory();
const dir = mkdtempSync(join(tmpdir(), 'skein-hand-'));

function open(name, { withoutRowid = false, envelopeIndex = true, twoRows = false } = {}) {
  const db = new Database(join(dir, `${name}.db`));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec(`CREATE TABLE skein_executions (execution_id TEXT NOT NULL PRIMARY KEY, workflow TEXT, status TEXT,
      fence INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID;
    CREATE INDEX s1 ON skein_executions (status, execution_id);
    CREATE INDEX s2 ON skein_executions (workflow, execution_id);
    CREATE INDEX s3 ON skein_executions (workflow, status, execution_id);
    CREATE TABLE skein_events (execution_id TEXT NOT NULL, seq INTEGER NOT NULL,
      envelope_id TEXT NOT NULL ${envelopeIndex ? 'UNIQUE' : ''}, type TEXT NOT NULL, payload TEXT NOT NULL,
      fence INTEGER NOT NULL, recorded_at INTEGER NOT NULL, PRIMARY KEY (execution_id, seq))
      ${withoutRowid ? 'WITHOUT ROWID' : ''};`);
  const begin = db.prepare('BEGIN IMMEDIATE');
  const commit = db.prepare('COMMIT');
  const dataVersion = db.prepare('PRAGMA data_version').pluck();
  const selectHead = db.prepare(
    'SELECT x.fence, coalesce((SELECT max(seq) FROM skein_events e WHERE e.execution_id = x.execution_id), -1) ' +
      'AS lastSeq, x.status, x.workflow FROM skein_executions x WHERE x.execution_id = ?',
  );
  const columns = '(execution_id, seq, envelope_id, type, payload, fence, recorded_at)';
  const one = db.prepare(`INSERT INTO skein_events ${columns} VALUES (?, ?, ?, ?, ?, ?, ?)`);
  const two = db.prepare(
    `INSERT INTO skein_events ${columns} VALUES (?, ?, ?, ?, ?, ?, ?), (?, ?, ?, ?, ?, ?, ?)`,
  );
  const upsert = db.prepare(
    'INSERT INTO skein_executions (execution_id, workflow, status) VALUES (?, ?, ?) ' +
      'ON CONFLICT (execution_id) DO UPDATE SET workflow = coalesce(skein_executions.workflow, excluded.workflow), ' +
      'status = excluded.status',
  );
  const setStatus = db.prepare('UPDATE skein_executions SET status = ? WHERE execution_id = ?');
  const events = (id, seq, [t1, p1], [t2, p2]) => {
    const now = Date.now();
    if (twoRows) two.run(id, seq, newId(), t1, p1, 0, now, id, seq + 1, newId(), t2, p2, 0, now);
    else {
      one.run(id, seq, newId(), t1, p1, 0, now);
      one.run(id, seq + 1, newId(), t2, p2, 0, now);
    }
  };
  return (tag) => {
    for (let first = 0; first < count; first += 200) {
      const last = Math.min(count, first + 200);
      begin.run();
      dataVersion.get();
      for (let i = first; i < last; i++) {
        const id = `${tag}${i}`;
        selectHead.get(id);
        events(
          id,
          0,
          ['EXECUTION_STARTED', `{"workflow":"one","version":1,"input":{"n":${i}}}`],
          ['STEP_STARTED', '{"position":0,"name":"s0","attempt":1}'],
        );
        upsert.run(id, 'one', 'running');
      }
      commit.run();
      begin.run();
      dataVersion.get();
      for (let i = first; i < last; i++) {
        const id = `${tag}${i}`;
        events(
          id,
          2,
          ['STEP_COMPLETED', `{"position":0,"name":"s0","kind":"step","output":${i + 1},"attempt":1}`],
          ['EXECUTION_COMPLETED', `{"output":${i + 1}}`],
        );
        setStatus.run('completed', id);
      }
      commit.run();
    }
  };
}

const variants = {
  rowid: open('rowid'),
  'without-rowid': open('without-rowid', { withoutRowid: true }),
  'no-envelope-index': open('no-envelope-index', { envelopeIndex: false }),
  'two-row-insert': open('two-row-insert', { twoRows: true }),
};
const cpu = Object.fromEntries(Object.keys(variants).map((name) => [name, []]));
for (let round = 0; round < rounds; round++) {
  for (const [name, run] of Object.entries(variants)) {
    const start = process.cpuUsage();
    run(`r${round}-`);
    const used = process.cpuUsage(start);
    cpu[name].push((used.user + used.system) / count);
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
for (const [name, xs] of Object.entries(cpu))
  console.log(`${name}: ${median(xs).toFixed(2)} µs CPU per execution`);
rmSync(dir, { recursive: true, force: true });
