import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { openSqliteStores } from '@skein/store-sqlite';
import { createRuntime, type Envelope } from '@skein/workflow-runtime';
import { executionLeaseKey } from '@skein/workflow-runtime/internal';
import { afterAll, describe, expect, it } from 'vitest';
import { shipOrder } from './support/crash-workflow.js';
import { exited, spawnScript } from './support/spawn.js';

async function readLog(dbPath: string, id: string): Promise<{ log: Envelope[]; lease: unknown }> {
  const stores = openSqliteStores({ path: dbPath });
  try {
    const log = await createRuntime({ stores, workflows: [shipOrder] }).history(id);
    return { log, lease: await stores.leases.get(executionLeaseKey(id)) };
  } finally {
    await stores.close();
  }
}

describe('durable supervision across real processes', () => {
  const dir = mkdtempSync(join(tmpdir(), 'skein-supervision-crash-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('A is SIGKILLed mid-step; B, running only a Supervisor, sees the lease expire and completes the execution', async () => {
    const dbPath = join(dir, 'skein.db');
    const effectsFile = join(dir, 'effects.log');
    const owner = spawnScript('./crash-owner.ts', [dbPath, effectsFile, 'ship-1']);
    const ownerExit = exited(owner);
    for await (const line of createInterface({ input: owner.stdout! })) {
      if (line === 'in-step print-label') {
        owner.kill('SIGKILL');
        break;
      }
    }
    expect((await ownerExit).signal).toBe('SIGKILL');
    const atCrash = await readLog(dbPath, 'ship-1');
    expect(atCrash.log.map((e) => e.type)).toEqual([
      'EXECUTION_STARTED',
      'STEP_STARTED',
      'STEP_COMPLETED',
      'STEP_STARTED',
    ]);

    const supervisor = spawnScript('./crash-supervisor.ts', [dbPath, 'ship-1']);
    let last = '';
    for await (const line of createInterface({ input: supervisor.stdout! })) last = line;
    expect((await exited(supervisor)).code).toBe(0);
    expect(last).toBe('recovered completed');

    const { log, lease } = await readLog(dbPath, 'ship-1');
    const types = log.map((e) => e.type);
    expect(types.filter((t) => t === 'EXECUTION_RECOVERED')).toHaveLength(1);
    expect(types.at(-1)).toBe('EXECUTION_COMPLETED');
    expect(log.map((e) => e.seq)).toEqual(log.map((_, i) => i));
    const recovered = log.find((e) => e.type === 'EXECUTION_RECOVERED')!;
    expect(recovered.fence).toBeGreaterThan(log[0]!.fence);
    expect(lease).toBeNull();

    const effects = readFileSync(effectsFile, 'utf8').trim().split('\n');
    const times = (step: string) => effects.filter((e) => e === step).length;
    expect(times('charge-card')).toBe(1);
    expect(times('print-label')).toBe(2); // the interrupted step, and only it, ran again
    expect(times('notify-customer')).toBe(1);
  }, 60_000);
});
