/** Skein as a benchmark engine, on any store: one runtime, one workflow per shape. */
import { createRuntime, defineWorkflow, type Stores } from '@skein/workflow-runtime';
import { z } from 'zod';
import { type Engine, expectResult, SHAPES, type Shape } from './engine.js';

const input = z.object({ n: z.number() });

/** The Skein workflow of `count` steps: each step adds one to the running total. */
export function stepsWorkflow(count: number) {
  return defineWorkflow({
    name: `bench-steps-${count}`,
    input,
    async run(ctx, { n }) {
      let total = n;
      for (let i = 0; i < count; i++) total = await ctx.step(`s${i}`, () => total + 1);
      return total;
    },
  });
}

const workflows = SHAPES.map(stepsWorkflow);

/** An engine running Skein on `stores`; `closeStores` runs after the runtime has closed. */
export function skeinEngine(name: string, stores: Stores, closeStores: () => Promise<void>): Engine {
  const runtime = createRuntime({ stores, workflows });
  let prepared = 0;
  return {
    async prepare(shape: Shape) {
      const prefix = `${shape}-${prepared++}-`;
      const workflow = workflows[SHAPES.indexOf(shape)]!;
      // start + result, as the DBOS engine does startWorkflow + getResult, with a given id.
      return async (i) => {
        const handle = await runtime.start(workflow, { n: i }, { executionId: prefix + i });
        expectResult(name, i, await handle.result(), i + shape);
      };
    },
    async close() {
      await runtime.close();
      await closeStores();
    },
  };
}
