/**
 * DBOS Transact (`@dbos-inc/dbos-sdk`) as a benchmark engine: its system database is the fresh
 * PostgreSQL database it is given. Workflows are registered with `DBOS.registerWorkflow`, steps
 * run through `DBOS.runStep`, and each run is `DBOS.startWorkflow(...)` then `handle.getResult()`.
 * DBOS is one per process, so only one DBOS engine may be open at a time.
 */
import { DBOS } from '@dbos-inc/dbos-sdk';
import { type EngineSpec, expectResult, SHAPES, type Shape } from './engine.js';

function registerShape(count: number) {
  return DBOS.registerWorkflow(
    async (n: number) => {
      let total = n;
      for (let i = 0; i < count; i++) {
        const before = total;
        total = await DBOS.runStep(async () => before + 1, { name: `s${i}` });
      }
      return total;
    },
    { name: `bench-steps-${count}` },
  );
}

/** DBOS Transact on PostgreSQL (system database pool of 10, its default). */
export const dbos: EngineSpec = {
  name: 'dbos postgres',
  kind: 'dbos',
  store: 'postgres',
  tags: ['postgres', 'dbos'],
  async open({ pgUrl }) {
    if (pgUrl === undefined) throw new Error('bench: dbos needs a database URL');
    const workflows = new Map(SHAPES.map((shape) => [shape, registerShape(shape)]));
    DBOS.setConfig({ name: 'skein-bench', systemDatabaseUrl: pgUrl, logLevel: 'error' });
    await DBOS.launch();
    let prepared = 0;
    return {
      async prepare(shape: Shape) {
        const workflow = workflows.get(shape)!;
        const prefix = `${shape}-${prepared++}-`;
        return async (i) => {
          const handle = await DBOS.startWorkflow(workflow, { workflowID: prefix + i })(i);
          expectResult('dbos', i, await handle.getResult(), i + shape);
        };
      },
      close: () => DBOS.shutdown({ deregister: true }),
    };
  },
};
