/**
 * An application with its own zod: it configures its copy (a custom error for every issue),
 * defines a workflow with its schemas, and asks Skein to validate. Prints what it saw, and
 * which zod files the application and Skein load, as JSON.
 */
import { createRequire } from 'node:module';
import { createRuntime, defineWorkflow, openMemoryStores } from '@skein/workflow-runtime';
import { z } from 'zod';

const fromApp = createRequire(import.meta.url);
const fromSkein = createRequire(import.meta.resolve('@skein/workflow-runtime'));
const zodFiles = { app: fromApp.resolve('zod'), skein: fromSkein.resolve('zod') };

z.config({ customError: () => 'refused by the application zod' });

const greet = defineWorkflow({
  name: 'greet',
  input: z.object({ name: z.string() }),
  async run(ctx, { name }) {
    return ctx.step('greet', () => `hello ${name}`);
  },
});
const stores = openMemoryStores();
const runtime = createRuntime({ stores, workflows: [greet], maintenance: false });
const output = await (await runtime.start(greet, { name: 'ana' })).result();
const message = (thrown) => (thrown instanceof Error ? thrown.message : String(thrown));
// The application's schema, refused through Skein.
const input = await runtime.start(greet, { name: 42 }).then(() => 'accepted', message);
// Skein's own schema (its options), refused with whatever zod Skein loaded.
let options = 'accepted';
try {
  createRuntime({ stores, workflows: [greet], maintenance: { intervalMs: -1 } });
} catch (thrown) {
  options = message(thrown);
}
await runtime.close();
process.stdout.write(JSON.stringify({ output, input, options, zodFiles }));
