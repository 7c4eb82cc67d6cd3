/** Every example of docs/{sleep,signals,messages,children,cancellation,versions,inspection,continue-as-new,workflows,operating}.md runs, on in-memory stores. */
import { describe, expect, test } from 'vitest';
import { main as cancellation } from './cancellation.js';
import { main as childHandles } from './child-handles.js';
import { main as children } from './children.js';
import { main as continueAsNew } from './continue-as-new.js';
import { main as deadlines } from './deadlines.js';
import { main as inspection } from './inspection.js';
import { main as messages } from './messages.js';
import { main as operatorControls } from './operator-controls.js';
import { main as retryControls } from './retry-controls.js';
import { main as signalWithStart } from './signal-with-start.js';
import { main as signals } from './signals.js';
import { main as sleep } from './sleep.js';
import { main as updates } from './updates.js';
import { main as versions } from './versions.js';

describe('feature examples (docs/)', () => {
  test('sleep: the reminder sleeps through a restart and reminds', async () => {
    expect(await sleep()).toBe('reminded ada');
  });

  test('signals: the approved order is charged', async () => {
    expect(await signals()).toBe('charged hold-a');
  });

  test('updates: each add answers the count, a repeated id the same answer, and checkout bills both', async () => {
    expect(await updates()).toEqual({ counts: [1, 1, 2], output: 'ada pays for apple, pear' });
  });

  test('messages: the reader gets every token in order and the last status', async () => {
    expect(await messages()).toEqual({ seen: ['0:DURABLE', '1:BY', '2:DEFAULT'], status: 'done' });
  });

  test('children: the checkout gets the invoice from its child', async () => {
    expect(await children()).toEqual({ output: 'sent: invoice for 30', childParent: 'checkout-1' });
  });

  test('children: a handle signals one child and cancels the other', async () => {
    expect(await childHandles()).toEqual({
      verdict: 'spec approved by ana',
      other: 'cancelled',
      secondId: 'publish-1-child-1',
    });
  });

  test('signals: signalWithStart starts the cart once with its signal; ctx.signal checks it out', async () => {
    expect(await signalWithStart()).toEqual({ cart: 'ada buys apple, pear', cashier: 'checked out' });
  });

  test('deadlines: the quote is cancelled at its deadline and withdrawn', async () => {
    expect(await deadlines()).toEqual({
      status: 'cancelled',
      code: 'DEADLINE_EXCEEDED',
      steps: ['offer', 'withdraw'],
    });
  });

  test('cancellation: the booking ends cancelled and its hold is released', async () => {
    expect(await cancellation()).toEqual({
      request: { cancelled: true, status: 'running' },
      ended: 'cancelled',
      steps: ['hold-room', 'release-hold'],
    });
  });

  test('versions: v1 and v2 side by side; a v1 execution is left pending on a v2-only node', async () => {
    expect(await versions()).toEqual({
      v1: 'hello ada',
      v2: 'HELLO ADA',
      refused: 'execution "greet-old": workflow "greet" version 1 is not registered (registered: greet@2)',
      pending: [{ executionId: 'greet-old', version: 1, registered: false }],
    });
  });

  test('continue-as-new: the tally counts every signal across a chain of bounded logs', async () => {
    const { output, chain } = (await continueAsNew()) as { output: number; chain: string[] };
    expect(output).toBe(30);
    // How many runs it takes depends on how the signals met the runs; each but the last continued.
    expect(chain.length).toBeGreaterThan(1);
    expect(chain[0]).toBe('tally-1 continued');
    expect(chain.at(-1)).toBe(`tally-1~${chain.length - 1} completed`);
    expect(chain.slice(0, -1).every((link) => link.endsWith(' continued'))).toBe(true);
  });

  test('inspection: suspended jobs are listed page by page', async () => {
    expect(await inspection()).toEqual({
      waiting: ['job-1', 'job-3'],
      completed: 3,
      status: 'suspended',
      events: ['EXECUTION_STARTED', 'TIMER_SCHEDULED', 'EXECUTION_SUSPENDED'],
    });
  });

  test('retry controls: the quote waits the 429 asked for, the declined card is not retried', async () => {
    expect(await retryControls()).toEqual({
      output: 'declined',
      failures: ['quote: retry in 20 ms', 'charge: non-retryable'],
    });
  });

  test('operator controls: resume re-drives the failed order, result times out while it waits, a fork runs on', async () => {
    expect(await operatorControls()).toEqual({
      failed:
        'execution "order-1" ended failed: execution "order-1": step "charge" failed after 2 attempts: card service down',
      reopened: [{ position: 1, name: 'charge' }],
      waited: 'still suspended',
      output: 'paid hold-a-1',
      forked: 'paid hold-a-1',
      reservations: 1,
    });
  });
});
