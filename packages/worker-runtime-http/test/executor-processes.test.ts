/**
 * Executors in their own processes, killed with SIGKILL, against a hub that restarts: results
 * retained across a crash are reconciled under the binding that accepted them, never lost and
 * never sent under another; runs of an earlier session stay quarantined (E1, E2, E4, and the
 * hub's reconciliation of earlier sessions).
 */
import type { ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { exited, spawnScript } from '../../worker-runtime-local/test/support/spawn.js';
import { paint } from './support/executor-workflow.js';
import { executorArena, type Line } from './support/executors.js';
import { SECRET, until } from './support/worker.js';

const child = new URL('./support/executor-child.ts', import.meta.url).href;

/** The lines a child prints, awaited by prefix. */
function lines(process: ChildProcess) {
  const seen: string[] = [];
  const waiting: { prefix: string; resolve: (rest: string) => void }[] = [];
  createInterface({ input: process.stdout! }).on('line', (line) => {
    seen.push(line);
    for (const w of waiting.splice(0)) {
      if (line.startsWith(`${w.prefix} `)) w.resolve(line.slice(w.prefix.length + 1));
      else waiting.push(w);
    }
  });
  return {
    seen,
    next: (prefix: string) =>
      new Promise<string>((resolve) => {
        const found = seen.find((line) => line.startsWith(`${prefix} `));
        if (found !== undefined) resolve(found.slice(prefix.length + 1));
        else waiting.push({ prefix, resolve });
      }),
  };
}

function rows(stateDir: string): Record<string, unknown>[] {
  const db = new Database(join(stateDir, 'executor.db'), { readonly: true });
  try {
    return db.prepare('SELECT * FROM executor_runs ORDER BY execution_id').all() as Record<string, unknown>[];
  } catch {
    return []; // the child has not created its file yet
  } finally {
    db.close();
  }
}

/** The binding of a `started` line. */
function bindingOf(started: string): { incarnation: string; sessionId: string } {
  const { incarnation, sessionId } = JSON.parse(started) as { incarnation: string; sessionId: string };
  return { incarnation, sessionId };
}

const reports = (log: Line[]) => log.filter((l) => l.message === 'result reported').map((l) => l.details);
const draws = (effects: string) => readFileSync(effects, 'utf8').trim().split('\n').filter(Boolean);

describe('executors in real processes', () => {
  const arena = executorArena();
  const spawned: ChildProcess[] = [];
  afterEach(() => {
    for (const process of spawned.splice(0))
      if (process.exitCode === null && process.signalCode === null) process.kill('SIGKILL');
  });
  const spawn = (url: URL, stateDir: string, mode: string) => {
    const process = spawnScript(child, [url.href, stateDir, mode, SECRET]);
    spawned.push(process);
    return process;
  };
  const stop = async (process: ChildProcess) => {
    const done = exited(process);
    process.kill('SIGTERM');
    await done;
  };

  it('E2: an executor SIGKILLed after retaining a result and before reporting it: the next process reconciles it under the original binding', async () => {
    const central = await arena.hub([paint]);
    const stateDir = join(arena.dir(), 'exec-child');
    const effects = join(arena.dir(), 'effects.log');
    writeFileSync(effects, '');
    const first = spawn(central.url, stateDir, 'hold-after-retain');
    const firstLines = lines(first);
    const firstSession = bindingOf(await firstLines.next('started'));
    const dispatched = central.dispatcher.dispatch({
      executionId: 'paint-9',
      workflow: 'paint',
      input: { frame: 9, effects },
    });
    expect(await firstLines.next('retained')).toBe('paint-9');
    const [atCrash] = rows(stateDir);
    expect(atCrash).toMatchObject({
      outcome: 'completed',
      result: '"frame-9"',
      attempts: 0,
      session_id: firstSession.sessionId,
    });
    const killed = exited(first);
    first.kill('SIGKILL');
    expect((await killed).signal).toBe('SIGKILL');
    expect(reports(central.log.lines)).toEqual([]);

    const second = spawn(central.url, stateDir, 'run');
    const started = JSON.parse(await lines(second).next('started')) as Record<string, unknown>;
    expect(started).toMatchObject({ quarantined: 0, unreconciled: 1 });
    expect(started.sessionId).not.toBe(firstSession.sessionId);
    const state = await dispatched;
    expect(state).toMatchObject({ status: 'completed', output: 'frame-9' });
    const seen = reports(central.log.lines);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ binding: firstSession, fence: atCrash!.fence, outcome: 'settled' });
    const log = await central.runtime.history('paint-9');
    expect(log.map((e) => [e.type, e.fence])).toEqual([
      ['EXECUTION_STARTED', atCrash!.fence],
      ['EXECUTION_COMPLETED', atCrash!.fence],
    ]);
    expect(draws(effects)).toEqual(['draw paint-9']);
    await until(() => rows(stateDir).length === 0, 15_000);
    await stop(second);
  }, 60_000);

  it('E1: the hub restarted mid-run: the run finishes, and the new incarnation accepts its result under the old binding', async () => {
    const first = await arena.hub([paint]);
    const port = Number(first.url.port);
    const stateDir = join(arena.dir(), 'exec-child');
    const effects = join(arena.dir(), 'effects.log');
    const gate = join(arena.dir(), 'gate');
    writeFileSync(effects, '');
    const executor = spawn(first.url, stateDir, 'run');
    const session = bindingOf(await lines(executor).next('started'));
    const input = { frame: 3, effects, gate };
    const dispatched = first.dispatcher.dispatch({ executionId: 'paint-3', workflow: 'paint', input }).then(
      () => 'settled',
      (error: Error) => error.message,
    );
    await until(() => rows(stateDir)[0]?.started_at != null, 15_000);
    await first.close();
    expect(await dispatched).toMatch(/the hub closed/);

    const second = await arena.hub([paint], { port });
    expect(second.hub.incarnation).not.toBe(first.hub.incarnation);
    writeFileSync(gate, '');
    await until(async () => (await second.runtime.loadState('paint-3'))?.status === 'completed', 20_000);
    // Every report carries the binding that accepted the run; one was sent by the old session
    // (refused: the new hub does not know it) unless it had ended first, one settled it.
    const seen = reports(second.log.lines);
    expect(seen.every((r) => JSON.stringify(r.binding) === JSON.stringify(session))).toBe(true);
    const settled = seen.filter((r) => r.outcome === 'settled');
    expect(settled).toHaveLength(1);
    expect((settled[0]!.reporter as { incarnation: string }).incarnation).toBe(second.hub.incarnation);
    expect(seen.filter((r) => r.outcome !== 'settled').map((r) => r.outcome)).toEqual(
      seen.length === 2 ? ['session_unknown'] : [],
    );
    expect(draws(effects)).toEqual(['draw paint-3']);
    await until(() => rows(stateDir).length === 0, 15_000);
    await stop(executor);
  }, 60_000);

  it('E1: a run accepted by a session that died is quarantined by the next: not started, not deleted, counted at startup', async () => {
    const central = await arena.hub([paint]);
    const stateDir = join(arena.dir(), 'exec-child');
    const effects = join(arena.dir(), 'effects.log');
    writeFileSync(effects, '');
    const first = spawn(central.url, stateDir, 'run');
    await lines(first).next('started');
    const input = { frame: 5, effects, gate: join(arena.dir(), 'never') };
    central.dispatcher.dispatch({ executionId: 'paint-5', workflow: 'paint', input }).catch(() => undefined);
    await until(() => draws(effects).length === 1, 15_000);
    const killed = exited(first);
    first.kill('SIGKILL');
    await killed;
    const before = rows(stateDir);

    const second = spawn(central.url, stateDir, 'run');
    const started = JSON.parse(await lines(second).next('started')) as Record<string, unknown>;
    expect(started).toMatchObject({ quarantined: 1, unreconciled: 0 });
    await new Promise((resolve) => setTimeout(resolve, 1_000)); // several heartbeats and passes
    expect(rows(stateDir)).toEqual(before);
    expect(draws(effects)).toEqual(['draw paint-5']);
    const found = await central.hub.inspectRetainedRun('exec-child', 'paint-5');
    expect(found).toMatchObject({ status: 'FOUND', run: { executionId: 'paint-5', started: true } });
    await stop(second);
  }, 60_000);
});
