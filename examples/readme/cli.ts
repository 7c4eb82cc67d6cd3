// examples/readme/cli.ts: the skein command from a script, and the inspector in your own server
import { createInspector, openTarget, runCli } from '@skein/cli';

// The same as `skein --db ./skein.db list --status failed --json` in a shell.
const code = await runCli(['--db', './skein.db', 'list', '--status', 'failed', '--json']);

// The inspector's pages as a Hono app (read-only: no cancel or signal forms).
const target = await openTarget({ db: './skein.db' });
const inspector = createInspector({ stores: target.stores, label: target.label });
const page = await inspector.request('/executions?status=suspended');
console.log(code, page.status);
await target.close();
