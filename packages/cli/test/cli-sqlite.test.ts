/** The `skein` executable over a real SQLite file: the shared suite, then what is SQLite's own. */

import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { openSqliteStores } from '@skein/store-sqlite';
import { Supervisor } from '@skein/worker-runtime-local';
import { createRuntime, defineWorkflow } from '@skein/workflow-runtime';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { BIN, ensureBuilt, skein, spawnSkein } from './support/binary.js';
import { populate, waitUntil } from './support/fixture.js';
import { cliSuite } from './support/suite.js';

const dirs: string[] = [];
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'skein-cli-'));
  dirs.push(dir);
  return dir;
}
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

cliSuite({
  name: 'SQLite',
  async open() {
    const path = join(tempDir(), 'skein.db');
    const stores = openSqliteStores({ path });
    return { args: ['--db', path], stores, close: () => stores.close() };
  },
});

const fixtures = fileURLToPath(new URL('./fixtures/', import.meta.url));
const execFileAsync = promisify(execFile);

describe('skein on SQLite: files, usage and takeovers', () => {
  beforeAll(ensureBuilt, 600_000);

  it('a missing file is not created: exit 1, and the message names the path', async () => {
    const path = join(tempDir(), 'nope.db');
    const result = await skein(['--db', path, 'list']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(path);
    expect(result.stderr).toContain('no such file');
    expect(existsSync(path)).toBe(false);
  });

  it('a file that is not a Skein database is refused and left as it was', async () => {
    const dir = tempDir();
    const text = join(dir, 'notes.db');
    writeFileSync(text, 'not sqlite at all');
    const notSqlite = await skein(['--db', text, 'list']);
    expect(notSqlite.code).toBe(1);
    expect(notSqlite.stderr).toContain('cannot be read as a SQLite database');
    const other = join(dir, 'other.db');
    const db = new Database(other);
    db.exec('CREATE TABLE t (x)');
    db.close();
    const before = readFileSync(other);
    const foreign = await skein(['--db', other, 'list']);
    expect(foreign.code).toBe(1);
    expect(foreign.stderr).toContain('without Skein tables');
    expect(readFileSync(other).equals(before)).toBe(true);
  });

  it('usage errors exit 2 and say what to pass instead', async () => {
    const path = join(tempDir(), 'skein.db');
    const stores = openSqliteStores({ path });
    await stores.close();
    const cases: [string[], string][] = [
      [['list'], 'no store given'],
      [['--db', path, '--pg', 'postgres://x/y', 'list'], 'either --db or --pg'],
      [['--db', path, 'frobnicate'], "unknown command 'frobnicate'"],
      [['--db', path, 'list', '--status', 'sleeping'], 'unknown status sleeping'],
      [['--db', path, 'list', '--limit', '0'], 'the limit must be an integer from 1 to 1000'],
      [['--db', path, 'show'], "missing required argument 'id'"],
      [['--db', path, 'recover'], 'needs their code: pass --workflows'],
      [['--db', path, 'recover', '--workflows', join(fixtures, 'nothing.mjs')], 'cannot be imported'],
    ];
    for (const [args, message] of cases) {
      const result = await skein(args);
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr, args.join(' ')).toContain(message);
    }
    expect((await skein(['--help'])).code).toBe(0);
  });

  it('reads leave the file byte for byte as it was', async () => {
    const path = join(tempDir(), 'skein.db');
    const stores = openSqliteStores({ path });
    await populate(stores);
    await stores.close();
    const hash = () => createHash('sha256').update(readFileSync(path)).digest('hex');
    const before = hash();
    for (const args of [
      ['list'],
      ['show', 'retried-1'],
      ['history', 'order-ok'],
      ['dead-letters'],
      ['recover', '--dry-run'],
    ])
      expect((await skein(['--db', path, ...args])).code).toBe(0);
    expect(hash()).toBe(before);
  });

  it('cancel fences out a live holder mid-step: the step is not run again, and a supervisor ends it cancelled', async () => {
    const path = join(tempDir(), 'skein.db');
    const stores = openSqliteStores({ path });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let runs = 0;
    const slow = defineWorkflow({
      name: 'slow',
      input: z.object({}),
      async run(ctx) {
        await ctx.step('long', async () => {
          runs += 1;
          await gate;
          return 'done';
        });
        return ctx.step('after', () => 'never');
      },
    });
    const runtime = createRuntime({
      stores,
      workflows: [slow],
      lease: { ttlMs: 400 },
      onError: () => undefined,
    });
    const supervisor = new Supervisor({
      runtime,
      stores,
      leaseTtlMs: 400,
      tickIntervalMs: 50,
      onError: () => undefined,
    });
    await runtime.start(slow, {}, { executionId: 'slow-1' });
    await waitUntil(() => runs === 1, 'the step to start');
    const result = await skein(['--db', path, 'cancel', 'slow-1', '--reason', 'stop it']);
    expect(result.code).toBe(0);
    release(); // the holder's step ends; its append is fenced out
    supervisor.start();
    await waitUntil(
      async () => (await stores.events.getExecution('slow-1'))?.status === 'cancelled',
      'slow-1 to end cancelled',
    );
    await supervisor.stop();
    await runtime.close();
    const log = await runtime.history('slow-1');
    expect(runs).toBe(1);
    expect(log.map((e) => e.type)).not.toContain('STEP_COMPLETED');
    expect(log.at(-1)).toMatchObject({ type: 'EXECUTION_CANCELLED', payload: { reason: 'stop it' } });
    await stores.close();
  });

  it('resume records EXECUTION_REDRIVEN for a failed execution and a supervisor re-drives it; other statuses exit 1, nothing written', async () => {
    const path = join(tempDir(), 'skein.db');
    const stores = openSqliteStores({ path });
    const runs = { reserve: 0, charge: 0 };
    const fixed = { now: false };
    const order = defineWorkflow({
      name: 'order',
      input: z.object({}),
      async run(ctx) {
        await ctx.step('reserve', () => ++runs.reserve);
        return ctx.step('charge', () => {
          runs.charge += 1;
          if (!fixed.now) throw new Error('card service down');
          return 'paid';
        });
      },
    });
    // No in-process maintenance: the supervisor below is what re-drives it.
    const runtime = createRuntime({
      stores,
      workflows: [order],
      lease: { ttlMs: 400 },
      maintenance: false,
      onError: () => undefined,
    });
    const handle = await runtime.start(order, {}, { executionId: 'order-1' });
    await expect(handle.result()).rejects.toThrow(/card service down/);
    await (await runtime.start(order, {}, { executionId: 'order-2' })).result().catch(() => undefined);
    fixed.now = true;
    const result = await skein(['--db', path, 'resume', 'order-1', '--reason', 'card service fixed']);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('runs again: "charge"');
    const log = await runtime.history('order-1');
    expect(log.at(-1)).toMatchObject({
      type: 'EXECUTION_REDRIVEN',
      payload: { reason: 'card service fixed', from: 'failed', reopened: [{ position: 1, name: 'charge' }] },
    });
    const again = await skein(['--db', path, 'resume', 'order-1']);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('only a failed or dead-lettered execution can be resumed');
    expect((await runtime.history('order-1')).length).toBe(log.length);
    const supervisor = new Supervisor({
      runtime,
      stores,
      leaseTtlMs: 400,
      tickIntervalMs: 50,
      onError: () => undefined,
    });
    supervisor.start();
    await waitUntil(
      async () => (await stores.events.getExecution('order-1'))?.status === 'completed',
      'order-1 to be re-driven to completed',
    );
    await supervisor.stop();
    await runtime.close();
    expect(runs).toEqual({ reserve: 2, charge: 3 }); // order-1: reserve once, charge twice; order-2: once each
    await stores.close();
  });

  it('recover --dry-run lists what a crash abandoned; recover --workflows resumes it, with a progress bar on a terminal', async () => {
    const path = join(tempDir(), 'skein.db');
    const stores = openSqliteStores({ path });
    await stores.close();
    const holder = spawn(process.execPath, [join(fixtures, 'crash-holder.mjs'), path], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await new Promise<void>((resolve, reject) => {
      holder.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('in step') && resolve());
      holder.once('exit', (code) => reject(new Error(`the holder exited ${code} before its step`)));
    });
    holder.kill('SIGKILL');
    await new Promise((resolve) => holder.once('exit', resolve));
    const dry = await skein(['--db', path, 'recover', '--dry-run', '--lease-ttl', '1', '--json']);
    expect(dry.code).toBe(0);
    expect(JSON.parse(dry.stdout)).toMatchObject({
      abandoned: [{ executionId: 'hang-1', status: 'running' }],
    });
    // On a terminal (script(1) gives it one) the progress bar is drawn on stderr.
    const command = [
      process.execPath,
      BIN,
      '--db',
      path,
      'recover',
      '--workflows',
      join(fixtures, 'workflows.mjs'),
      '--lease-ttl',
      '1',
    ];
    const recovered = await execFileAsync('script', [
      '-qec',
      command.map((a) => `'${a}'`).join(' '),
      '/dev/null',
    ]);
    expect(recovered.stdout).toMatch(/recover \[[^\]]*\] 1\/1 hang-1/);
    expect(recovered.stdout).toContain('recovered 1, skipped 0 of 1');
    const reopened = openSqliteStores({ path });
    const log = await createRuntime({ stores: reopened, workflows: [] }).history('hang-1');
    expect(log.map((e) => e.type)).toEqual([
      'EXECUTION_STARTED',
      'STEP_STARTED',
      'EXECUTION_RECOVERED',
      'STEP_STARTED',
      'STEP_COMPLETED',
      'EXECUTION_COMPLETED',
    ]);
    await reopened.close();
  });

  it('history --follow prints events as they are appended and ends with the execution', async () => {
    const path = join(tempDir(), 'skein.db');
    const stores = openSqliteStores({ path });
    await populate(stores);
    const follow = spawnSkein(['--db', path, 'history', 'order-waiting', '--follow']);
    await follow.waitFor(/EXECUTION_SUSPENDED/);
    const runtime = createRuntime({
      stores,
      workflows: (await import('./fixtures/workflows.mjs')).workflows,
    });
    await runtime.signal('order-waiting', 'approve', false);
    await follow.waitFor(/EXECUTION_COMPLETED/);
    expect(await follow.exited).toBe(0);
    expect(follow.output()).toContain('SIGNAL_RECEIVED');
    await runtime.close();
    await stores.close();
  });
});
