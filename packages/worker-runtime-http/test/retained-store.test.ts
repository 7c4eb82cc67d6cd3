/** The executor's retained runs on a real SQLite file in a temp dir (E1, E3, E6). */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ExecutorStateError } from '@skein/worker-runtime-http';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type AcceptedRun,
  type ChosenResult,
  MAX_DIAGNOSTIC_CHARS,
  RetainedStore,
  runKey,
} from '../src/executor/retained-store.js';

const s1 = { incarnation: 'hub-1', sessionId: 'session-1' };
const s2 = { incarnation: 'hub-1', sessionId: 'session-2' };

function accepted(executionId: string, binding = s1, fence = 1): AcceptedRun {
  return {
    executionId,
    fence,
    workflow: 'render',
    input: '{"frame":1}',
    binding,
    transactionId: `tx-${executionId}`,
    acceptedAt: 1_000,
    dueAt: 61_000,
  };
}

const completed = (at: number, result = '"ok"'): ChosenResult => ({
  outcome: 'completed',
  result,
  exitCode: 0,
  exitMessage: 'completed',
  chosenAt: at,
});

describe('RetainedStore', () => {
  const dirs: string[] = [];
  const stores: RetainedStore[] = [];
  afterEach(() => {
    for (const store of stores.splice(0)) if (store.open) store.close();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  const open = (executorId = 'exec-a', version = '1.0.0', dir?: string) => {
    const stateDir = dir ?? mkdtempSync(join(tmpdir(), 'skein-retained-'));
    if (dir === undefined) dirs.push(stateDir);
    const store = RetainedStore.open(stateDir, executorId, version);
    stores.push(store);
    return { store, stateDir };
  };

  it('E1: an accepted run keeps the binding that accepted it; accepting it again changes nothing', () => {
    const { store } = open();
    expect(store.accept(accepted('r1'))).toBe(true);
    expect(store.accept(accepted('r1', s2))).toBe(false);
    expect(store.get('r1', 1)?.binding).toEqual(s1);
  });

  it('E2: a result is chosen once; a second choice keeps the first', () => {
    const { store } = open();
    store.accept(accepted('r1'));
    expect(store.choose('r1', 1, completed(5, '"first"'))?.result).toBe('"first"');
    expect(store.choose('r1', 1, completed(6, '"second"'))).toEqual(completed(5, '"first"'));
  });

  it('E3: a refusal leaves the delivery set with its cause; an ack releases the row; the diagnostic is bounded', () => {
    const { store } = open();
    for (const id of ['r1', 'r2', 'r3']) {
      store.accept(accepted(id));
      store.choose(id, 1, completed(id === 'r1' ? 1 : 2));
    }
    store.recordAttempt('r1', 1, 'x'.repeat(5_000));
    store.refuse('r1', 1, 'not_your_run', 'the run was handed out under another binding');
    expect(store.get('r1', 1)).toMatchObject({
      attempts: 1,
      refused: 'not_your_run',
      lastDiagnostic: 'the run was handed out under another binding',
    });
    store.recordAttempt('r2', 1, 'y'.repeat(5_000));
    expect(store.get('r2', 1)?.lastDiagnostic).toHaveLength(MAX_DIAGNOSTIC_CHARS);
    expect(store.deliverable(32, new Set()).map((r) => r.executionId)).toEqual(['r2', 'r3']);
    expect(store.deliverable(32, new Set([runKey('r2', 1)])).map((r) => r.executionId)).toEqual(['r3']);
    store.release('r2', 1);
    expect(store.get('r2', 1)).toBeNull();
    expect(store.get('r1', 1)).not.toBeNull();
  });

  it('E4: refused rows and rows with no binding cannot crowd deliverable results out of a pass', () => {
    const { store, stateDir } = open();
    for (let i = 0; i < 40; i++) {
      const id = `refused-${String(i).padStart(2, '0')}`;
      store.accept(accepted(id));
      store.choose(id, 1, completed(i));
      store.refuse(id, 1, 'unknown_run', 'no run of this execution was handed out');
    }
    const db = new Database(join(stateDir, 'executor.db'));
    db.prepare(
      "INSERT INTO executor_runs (execution_id, fence, workflow, transaction_id, accepted_at, due_at, outcome, result, exit_code, exit_message, chosen_at) VALUES ('unbound', 1, 'render', 'tx', 0, 0, 'completed', '1', 0, 'completed', 0)",
    ).run();
    db.close();
    store.accept(accepted('late', s2));
    store.choose('late', 1, completed(100));
    expect(store.deliverable(32, new Set()).map((r) => r.executionId)).toEqual(['late']);
  });

  it('E1: a new session counts rows of earlier sessions and rows with no binding as quarantined, and unreconciled results', () => {
    const { store, stateDir } = open();
    store.accept(accepted('running-old', s1));
    store.accept(accepted('done-old', s1));
    store.choose('done-old', 1, completed(3));
    store.accept(accepted('running-now', s2));
    const db = new Database(join(stateDir, 'executor.db'));
    db.prepare(
      "INSERT INTO executor_runs (execution_id, fence, workflow, transaction_id, accepted_at, due_at) VALUES ('unbound', 1, 'render', 'tx', 0, 0)",
    ).run();
    db.close();
    expect(store.counts(s2)).toEqual({ quarantined: 2, unreconciled: 1 });
  });

  it('E6: a state directory reused with another packageVersion is refused, and nothing is written', () => {
    const { store, stateDir } = open('exec-a', '1.0.0');
    store.accept(accepted('r1'));
    store.close();
    expect(() => open('exec-a', '2.0.0', stateDir)).toThrow(ExecutorStateError);
    expect(() => open('exec-a', '2.0.0', stateDir)).toThrow(
      /package_version "1.0.0"; this executor has "2.0.0"/,
    );
    expect(() => open('exec-b', '1.0.0', stateDir)).toThrow(
      /executor_id "exec-a"; this executor has "exec-b"/,
    );
    const db = new Database(join(stateDir, 'executor.db'), { readonly: true });
    const meta = db.prepare('SELECT key, value FROM executor_meta ORDER BY key').all();
    db.close();
    expect(meta).toEqual([
      { key: 'executor_id', value: 'exec-a' },
      { key: 'package_version', value: '1.0.0' },
    ]);
    expect(open('exec-a', '1.0.0', stateDir).store.get('r1', 1)?.binding).toEqual(s1);
  });
});
