/**
 * The Restate peer's service process (started by engines/restate.ts): a Restate SDK endpoint
 * with one workflow per shape, `bench-steps-<n>`, whose `run` handler makes `n` `ctx.run`
 * steps, each adding one to its input. It listens on the loopback port in argv[2] (0: any)
 * and prints `{"port": …}` on stdout once it does.
 *
 * The SDK needs `Promise.withResolvers`, which Node 20 lacks: it is polyfilled here, in this
 * process only, before the SDK is loaded; nothing else in the bench sees it.
 */
import type * as Restate from '@restatedev/restate-sdk';

interface Resolvers<T> {
  promise: Promise<T>;
  resolve: (value: T | PromiseLike<T>) => void;
  reject: (reason?: unknown) => void;
}
const promiseStatic = Promise as unknown as { withResolvers?: <T>() => Resolvers<T> };
if (typeof promiseStatic.withResolvers !== 'function') {
  promiseStatic.withResolvers = <T>(): Resolvers<T> => {
    let resolve!: Resolvers<T>['resolve'];
    let reject!: Resolvers<T>['reject'];
    const promise = new Promise<T>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    return { promise, resolve, reject };
  };
}

const restate: typeof Restate = await import('@restatedev/restate-sdk');
const SHAPES = [0, 1, 3, 10];

function stepsWorkflow(count: number) {
  return restate.workflow({
    name: `bench-steps-${count}`,
    handlers: {
      run: async (ctx: Restate.WorkflowContext, n: number): Promise<number> => {
        let total = n;
        for (let i = 0; i < count; i++) {
          const before = total;
          total = await ctx.run(`s${i}`, async () => before + 1);
        }
        return total;
      },
    },
  });
}

const endpoint = restate.endpoint();
for (const shape of SHAPES) endpoint.bind(stepsWorkflow(shape));
// Only the SDK's warnings and errors: its per-invocation info lines would be the bench's cost.
endpoint.setLogger((params, message, ...rest) => {
  if (params.level === 'warn' || params.level === 'error') console.error(message, ...rest);
});
const port = await endpoint.listen(Number(process.argv[2] ?? 0));
console.log(JSON.stringify({ port }));
