import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadComponent, SandboxErrorCodes, SandboxPool, type SandboxRun } from '@skein/sandbox-wasm';
import { InvalidInputError, NonRetryableError } from '@skein/workflow-runtime';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assembledComponent } from './support/fixtures.js';
import { input, rejection, testEvaluator } from './support/pool.js';

const pool = new SandboxPool({ size: 2 });
const evaluator = testEvaluator();
const NO_FUEL_LIMIT = 1e15;

beforeAll(async () => pool.warm(await evaluator), 120_000);
afterAll(() => pool.close());

/** The evaluator's answer to a plain text input. */
async function scores(text: string): Promise<unknown> {
  return JSON.parse(await pool.invoke(await evaluator, input({ text })));
}

describe('S1 a fresh instance per invocation', () => {
  it('state of one invocation does not reach the next', async () => {
    const first = JSON.parse(await pool.invoke(await evaluator, input({ text: 'a' })));
    const second = JSON.parse(await pool.invoke(await evaluator, input({ text: 'b' })));
    expect(first.calls).toBe(1);
    expect(second.calls).toBe(1);
  });

  it('memory and globals one invocation wrote are not there in the next, in the same thread', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'skein-sandbox-remembers-'));
    const single = new SandboxPool({ size: 1 });
    try {
      const remembers = await loadComponent(await assembledComponent('remembers', dir));
      const answers: string[] = [];
      for (let i = 0; i < 4; i++) answers.push(await single.invoke(remembers, '{}'));
      expect(answers).toEqual(['0o', '0o', '0o', '0o']);
    } finally {
      await single.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('S2 fuel', () => {
  it('stops an infinite loop with SANDBOX_FUEL_EXHAUSTED, and the next invocation succeeds', async () => {
    const error = await rejection(
      pool.run(await evaluator, input({ loop: true }), { fuel: 5_000_000, timeoutMs: 120_000 }),
    );
    expect(error.code).toBe(SandboxErrorCodes.FuelExhausted);
    expect(error).toBeInstanceOf(NonRetryableError);
    expect(error).toMatchObject({ fuel: 5_000_000 });
    expect(await scores('after')).toMatchObject({ score: 5 });
  });

  it('is deterministic: the same input uses the same fuel, on every thread, and the limit cuts at that count exactly', async () => {
    const component = await evaluator;
    const runs = await Promise.all(
      Array.from({ length: 6 }, () => pool.run(component, input({ work: 500 }))),
    );
    const used = runs[0]!.fuelUsed;
    expect(runs.map((run) => run.fuelUsed)).toEqual(runs.map(() => used));
    const more = await pool.run(component, input({ work: 501 }));
    expect(more.fuelUsed).toBeGreaterThan(used);

    expect((await pool.run(component, input({ work: 500 }), { fuel: used })).fuelUsed).toBe(used);
    const short = await rejection(pool.run(component, input({ work: 500 }), { fuel: used - 1 }));
    expect(short.code).toBe(SandboxErrorCodes.FuelExhausted);
  });
});

describe('S3 wall-clock timeout', () => {
  it('stops an infinite loop that fuel does not, replaces the thread, and the next invocation succeeds', async () => {
    const component = await evaluator;
    const single = new SandboxPool({ size: 1 });
    try {
      const before = (await single.run(component, input({ text: 'ok' }))).thread;
      const started = Date.now();
      const error = await rejection(
        single.run(component, input({ loop: true }), { fuel: NO_FUEL_LIMIT, timeoutMs: 300 }),
      );
      expect(error.code).toBe(SandboxErrorCodes.Timeout);
      expect(error).toMatchObject({ timeoutMs: 300 });
      expect(Date.now() - started).toBeGreaterThanOrEqual(300);
      const after = await single.run(component, input({ text: 'again' }));
      expect(after.thread).not.toBe(before);
      expect(JSON.parse(after.output)).toMatchObject({ score: 5 });
    } finally {
      await single.close();
    }
  });
});

describe('S4 memory', () => {
  it('traps a memory bomb at the cap with SANDBOX_MEMORY_LIMIT, the process RSS bounded, and the next invocation succeeds', async () => {
    const component = await evaluator;
    const cap = 32 << 20;
    const baseline = process.memoryUsage().rss;
    let peak = baseline;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 2);
    try {
      const error = await rejection(
        pool.run(component, input({ bomb: true }), {
          memoryBytes: cap,
          fuel: NO_FUEL_LIMIT,
          timeoutMs: 120_000,
        }),
      );
      expect(error.code).toBe(SandboxErrorCodes.MemoryLimit);
      expect(error).toMatchObject({ limit: 'memoryBytes', value: cap });
    } finally {
      clearInterval(sampler);
    }
    peak = Math.max(peak, process.memoryUsage().rss);
    // The guest's memory is at most the cap; the rest is the worker's own bookkeeping.
    expect(peak - baseline).toBeLessThan(cap + (64 << 20));
    expect(await scores('after the bomb')).toMatchObject({ score: 14 });
  });

  it('refuses an invocation whose initial memory is over the cap before it runs', async () => {
    const error = await rejection(pool.run(await evaluator, input({ text: 'x' }), { memoryBytes: 1 << 20 }));
    expect(error).toMatchObject({
      code: SandboxErrorCodes.MemoryLimit,
      limit: 'memoryBytes',
      value: 1 << 20,
    });
  });

  it('holds the table and instance limits', async () => {
    const component = await evaluator;
    const tables = await rejection(pool.run(component, input({ text: 'x' }), { tableElements: 8 }));
    expect(tables).toMatchObject({ code: SandboxErrorCodes.MemoryLimit, limit: 'tableElements', value: 8 });
    const instances = await rejection(pool.run(component, input({ text: 'x' }), { instances: 5 }));
    expect(instances).toMatchObject({ code: SandboxErrorCodes.MemoryLimit, limit: 'instances', value: 5 });
    expect(await scores('within')).toMatchObject({ score: 6 });
  });
});

describe('S5 logs', () => {
  it('hands the guest logs to the host within the limits', async () => {
    const run = await pool.run(await evaluator, input({ logs: ['one', 'two'] }), {
      maxLogs: 2,
      maxLogBytes: 6,
    });
    expect(run.logs).toEqual(['one', 'two']);
  });

  it('caps a log flood by count and by bytes with SANDBOX_LOG_LIMIT, and the next invocation succeeds', async () => {
    const component = await evaluator;
    const byCount = await rejection(pool.run(component, input({ flood: 100_000 }), { maxLogs: 10 }));
    expect(byCount).toMatchObject({ code: SandboxErrorCodes.LogLimit, limit: 'maxLogs', value: 10 });
    const byBytes = await rejection(
      pool.run(component, input({ logs: ['x'.repeat(60), 'y'.repeat(60)] }), { maxLogBytes: 100 }),
    );
    expect(byBytes).toMatchObject({ code: SandboxErrorCodes.LogLimit, limit: 'maxLogBytes', value: 100 });
    expect(await scores('quiet')).toMatchObject({ score: 5 });
  });
});

describe('S6 pool concurrency', () => {
  function maxOverlap(runs: SandboxRun[]): number {
    const edges = runs.flatMap((run) => [
      { at: run.startedAt, delta: 1 },
      { at: run.endedAt, delta: -1 },
    ]);
    edges.sort((a, b) => a.at - b.at || a.delta - b.delta);
    let open = 0;
    let most = 0;
    for (const edge of edges) {
      open += edge.delta;
      most = Math.max(most, open);
    }
    return most;
  }

  it('runs at most `size` invocations at once under 20 concurrent invocations, and all of them answer', async () => {
    const component = await evaluator;
    const runs = await Promise.all(
      Array.from({ length: 20 }, (_, i) => pool.run(component, input({ text: `case ${i}`, work: 20_000 }))),
    );
    expect(runs.map((run) => JSON.parse(run.output).score)).toEqual(runs.map((_, i) => `case ${i}`.length));
    expect(new Set(runs.map((run) => run.thread)).size).toBeLessThanOrEqual(2);
    expect(maxOverlap(runs)).toBeLessThanOrEqual(2);
  });

  it('the process-wide cap holds over several pools', async () => {
    const component = await evaluator;
    const other = new SandboxPool({ size: 2 });
    SandboxPool.setProcessConcurrency(1);
    try {
      await other.warm(component);
      const runs = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          (i % 2 === 0 ? pool : other).run(component, input({ work: 20_000 })),
        ),
      );
      expect(new Set(runs.map((run) => run.thread)).size).toBeGreaterThan(1);
      expect(maxOverlap(runs)).toBe(1);
    } finally {
      SandboxPool.setProcessConcurrency(availableParallelism()); // the default
      await other.close();
    }
  });
});

describe('S7 what the guest gets', () => {
  it('has no host objects: no process, require, fetch, timers or WebAssembly', async () => {
    const globals = JSON.parse(await pool.invoke(await evaluator, input({ globals: true })));
    expect(Object.values(globals)).toEqual(Object.values(globals).map(() => 'undefined'));
  });

  it('has no clock: Date.now() traps with SANDBOX_TRAP', async () => {
    const error = await rejection(pool.run(await evaluator, input({ clock: true })));
    expect(error.code).toBe(SandboxErrorCodes.Trap);
    expect(await scores('after')).toMatchObject({ score: 5 });
  });

  it('has no entropy: Math.random() gives the same value in every invocation', async () => {
    const component = await evaluator;
    const values = await Promise.all(
      Array.from({ length: 4 }, () => pool.invoke(component, input({ random: true }))),
    );
    expect(new Set(values).size).toBe(1);
  });

  it("the evaluator's own err is SANDBOX_EVALUATOR_ERROR with its reason", async () => {
    const error = await rejection(pool.run(await evaluator, input({ refuse: 'no such case' })));
    expect(error).toMatchObject({ code: SandboxErrorCodes.EvaluatorError, reason: 'no such case' });
    expect(error).toBeInstanceOf(NonRetryableError);
  });
});

describe('S8 bad input is refused before anything runs', () => {
  it('names the bad limit or input', async () => {
    const component = await evaluator;
    const limit = await rejection(pool.run(component, input({ text: 'x' }), { fuel: -1 }));
    expect(limit).toBeInstanceOf(InvalidInputError);
    expect(limit.message).toContain('limits.fuel');
    const unknown = await rejection(pool.run(component, input({}), { fule: 5 } as never));
    expect(unknown).toBeInstanceOf(InvalidInputError);
    const notText = await rejection(pool.run(component, 42 as never));
    expect(notText).toBeInstanceOf(InvalidInputError);
    expect(notText.message).toContain('input');
    await expect(pool.run({} as never, input({}))).rejects.toThrow('loadComponent');
  });

  it('a closed pool refuses with SANDBOX_POOL_CLOSED', async () => {
    const closed = new SandboxPool({ size: 1 });
    await closed.close();
    const error = await rejection(closed.run(await evaluator, input({ text: 'x' })));
    expect(error.code).toBe(SandboxErrorCodes.PoolClosed);
  });
});
