/**
 * createClient on PostgreSQL, with the work run by a Supervisor in another process: the client
 * starts, signals, cancels and reads, and never runs a step (docs/supervision.md#clients).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import {
  type Client,
  createClient,
  InvalidInputError,
  UnknownSignalError,
  UnknownWorkflowError,
} from '@skein/workflow-runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approval } from './client/workflow.js';
import { freshSchema, openTestStores, PG_URL, whenPostgres } from './support/pg.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const workerScript = fileURLToPath(new URL('./client/worker.ts', import.meta.url));

function spawnWorker(schema: string): { child: ChildProcess; pid: Promise<number> } {
  const child = spawn(process.execPath, ['--import', 'tsx', workerScript, PG_URL, schema], {
    cwd: root,
    env: { ...process.env, TSX_TSCONFIG_PATH: `${root}tsconfig.json` },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const pid = new Promise<number>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`the worker exited (${code}) before it was ready`)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (line.startsWith('ready ')) resolve(Number(line.slice('ready '.length)));
    });
  });
  return { child, pid };
}

whenPostgres(() => {
  describe('createClient on PostgreSQL with a Supervisor in another process', () => {
    const dir = mkdtempSync(join(tmpdir(), 'skein-client-'));
    const effectsFile = join(dir, 'effects.log');
    const schema = freshSchema();
    let stores: Awaited<ReturnType<typeof openTestStores>>;
    let client: Client;
    let worker: ChildProcess;
    let workerPid: number;

    beforeAll(async () => {
      stores = await openTestStores({ schema });
      client = createClient({ stores, workflows: [approval] });
      const spawned = spawnWorker(schema);
      worker = spawned.child;
      workerPid = await spawned.pid;
    });
    afterAll(async () => {
      const exited = new Promise((resolve) => worker.once('exit', resolve));
      worker.stdin?.end();
      await exited;
      await client.close();
      await stores.close();
      rmSync(dir, { recursive: true, force: true });
    });

    const effects = () =>
      readFileSync(effectsFile, 'utf8')
        .trim()
        .split('\n')
        .map((line) => line.split(' ') as [string, string, string]);

    it('start and signal from the client: the worker runs every step, the client none', async () => {
      const handle = await client.start(approval, { effectsFile }, { executionId: 'order-1' });
      expect((await client.history('order-1')).map((event) => event.type)).toEqual(['EXECUTION_STARTED']);
      await expect
        .poll(async () => (await client.loadState('order-1'))?.status, { timeout: 10_000 })
        .toBe('suspended');
      const sent = await client.signal('order-1', 'approve', { by: 'ana' });
      expect(sent).toMatchObject({ accepted: true, duplicate: false, woke: false });
      expect(await handle.result()).toBe('approved by ana');
      const ran = effects().filter(([, id]) => id === 'order-1');
      expect(ran.map(([, , step]) => step)).toEqual(['reserve', 'charge']);
      expect(ran.every(([pid]) => Number(pid) === workerPid)).toBe(true);
      expect(ran.some(([pid]) => Number(pid) === process.pid)).toBe(false);
    }, 30_000);

    it('a signal the workflow does not declare, or a payload its schema refuses, writes nothing', async () => {
      await client.start(approval, { effectsFile }, { executionId: 'order-2' });
      await expect
        .poll(async () => (await client.loadState('order-2'))?.status, { timeout: 10_000 })
        .toBe('suspended');
      const before = await client.history('order-2');
      await expect(client.signal('order-2', 'aprove', { by: 'ana' })).rejects.toThrow(UnknownSignalError);
      await expect(client.signal('order-2', 'approve', { by: 42 })).rejects.toThrow(InvalidInputError);
      expect(await stores.signals.pending('order-2')).toEqual([]);
      expect(await client.history('order-2')).toEqual(before);
      await client.cancel('order-2', 'test over');
      await expect(client.handle('order-2').result()).rejects.toThrow(/cancelled/);
    }, 30_000);

    it('a client without the workflow refuses to start it, and still reads', async () => {
      const reader = createClient({ stores });
      await expect(reader.start(approval, { effectsFile })).rejects.toThrow(UnknownWorkflowError);
      expect((await reader.list({ workflow: 'approval' })).items.map((item) => item.executionId)).toEqual([
        'order-1',
        'order-2',
      ]);
      await reader.close();
    });

    it('cancel from the client ends a waiting execution cancelled, run by the worker', async () => {
      await client.start(approval, { effectsFile }, { executionId: 'order-3' });
      await expect
        .poll(async () => (await client.loadState('order-3'))?.status, { timeout: 10_000 })
        .toBe('suspended');
      expect(await client.cancel('order-3', 'customer asked')).toMatchObject({ cancelled: true });
      await expect
        .poll(async () => (await client.loadState('order-3'))?.status, { timeout: 15_000 })
        .toBe('cancelled');
      const ran = effects().filter(([, id]) => id === 'order-3');
      expect(ran.map(([, , step]) => step)).toEqual(['reserve']);
      expect(ran.every(([pid]) => Number(pid) === workerPid)).toBe(true);
    }, 30_000);
  });
});
