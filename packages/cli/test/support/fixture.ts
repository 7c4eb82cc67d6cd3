/** A store with one execution in every state the CLI shows, written by a real runtime. */
import { createRuntime, type ExecutionStatus, type Stores } from '@skein/workflow-runtime';
import { broken, nap, order, parent, retried, workflows } from '../fixtures/workflows.mjs';

/** Poll `check` until it is true (every 20 ms, at most `timeoutMs`); throws naming `what`. */
export async function waitUntil(
  check: () => Promise<boolean> | boolean,
  what: string,
  timeoutMs = 20_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The ids {@link populate} writes, with the status each ends in. */
export const FIXTURE: Record<string, ExecutionStatus> = {
  'order-ok': 'completed',
  'order-waiting': 'suspended',
  'order-pending': 'pending',
  'retried-1': 'completed',
  'broken-1': 'failed',
  'nap-1': 'suspended',
  'parent-1': 'completed',
  'leaf-of-parent-1': 'completed',
  'dead-1': 'dead_lettered',
};

/** Write the fixture's executions with a runtime that is closed again before this resolves. */
export async function populate(stores: Stores): Promise<void> {
  const runtime = createRuntime({ stores, workflows, maintenance: false, onError: () => undefined }); // writes states, runs none
  const statusOf = async (id: string) => (await runtime.loadState(id))?.status;
  const ok = await runtime.start(order, { sku: 'a' }, { executionId: 'order-ok' });
  await runtime.start(order, { sku: 'b' }, { executionId: 'order-waiting' });
  await runtime.enqueue(order, { sku: 'c' }, { executionId: 'order-pending' });
  await runtime.enqueue(order, { sku: 'd' }, { executionId: 'dead-1' });
  await runtime.deadLetter('dead-1', 'poison: the supervisor tick failed for 5 min');
  const r = await runtime.start(retried, {}, { executionId: 'retried-1' });
  const b = await runtime.start(broken, {}, { executionId: 'broken-1' });
  await runtime.start(nap, {}, { executionId: 'nap-1' });
  const p = await runtime.start(parent, {}, { executionId: 'parent-1' });
  await waitUntil(async () => (await statusOf('order-ok')) === 'suspended', 'order-ok to wait for approve');
  await runtime.signal('order-ok', 'approve', true);
  await Promise.all([ok.result(), r.result(), p.result(), b.result().catch(() => undefined)]);
  await waitUntil(async () => (await statusOf('order-waiting')) === 'suspended', 'order-waiting to suspend');
  await waitUntil(async () => (await statusOf('nap-1')) === 'suspended', 'nap-1 to suspend');
  await runtime.close();
}
