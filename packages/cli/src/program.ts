/**
 * The `skein` command line (commander): global flags choose the store, each subcommand is one
 * file under commands/. `runCli` returns the exit code: 0 ok, 1 failure, 2 usage.
 */
import { type ExecutionStatus, ExecutionStatuses, SkeinError } from '@skein/workflow-runtime';
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { cancelCommand } from './commands/cancel.js';
import { deadLettersCommand } from './commands/dead-letters.js';
import { historyCommand } from './commands/history.js';
import { listCommand } from './commands/list.js';
import { recoverCommand } from './commands/recover.js';
import { resumeCommand } from './commands/resume.js';
import { showCommand } from './commands/show.js';
import { signalCommand } from './commands/signal.js';
import { uiCommand } from './commands/ui.js';
import { CliError, ExitCodes } from './errors.js';
import { type Io, processIo } from './output.js';
import { openTarget, type Target, type TargetOptions } from './target.js';

/** Options of {@link runCli}. */
export interface RunCliOptions {
  io?: Io;
  /** Aborts long-running commands (`history --follow`, `ui`); the binary wires Ctrl-C to it. */
  signal?: AbortSignal;
}

/**
 * Run `skein` with `argv` (the arguments after the program name) and resolve with its exit code.
 * @example
 * process.exitCode = await runCli(['--db', './skein.db', 'list', '--status', 'failed']);
 */
export async function runCli(argv: readonly string[], options: RunCliOptions = {}): Promise<number> {
  const io = options.io ?? processIo;
  const signal = options.signal ?? new AbortController().signal;
  let code: number = ExitCodes.ok;
  const program = buildProgram(io, signal, (c) => {
    code = c;
  });
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return code;
  } catch (error) {
    return report(error, io);
  }
}

function buildProgram(io: Io, signal: AbortSignal, done: (code: number) => void): Command {
  const program = new Command('skein')
    .description('Inspect and operate Skein executions in a SQLite file or a PostgreSQL schema')
    .option('--db <path>', 'SQLite file of the stores (it must exist)')
    .option('--pg <url>', 'PostgreSQL URL of the stores, e.g. postgres://user@host:5432/db')
    .option('--schema <name>', 'PostgreSQL schema of the stores (default: skein)')
    .showHelpAfterError('(run skein --help for usage)')
    .exitOverride()
    .configureOutput({ writeOut: io.out, writeErr: io.err });
  /** Open the store of the global flags, run `work`, close the store. */
  const withTarget = (command: Command, work: (target: Target) => Promise<number>) => async () => {
    const target = await openTarget(command.optsWithGlobals<TargetOptions>());
    try {
      done(await work(target));
    } finally {
      await target.close();
    }
  };

  const list = program
    .command('list')
    .description('list executions ordered by id, one page at a time')
    .option(
      '--status <statuses>',
      `only these statuses, comma-separated (${ExecutionStatuses.join(', ')})`,
      statuses,
    )
    .option('--workflow <name>', 'only this workflow')
    .option('--blocked', 'only executions whose log cannot be continued (a replay that diverges from it)')
    .option('--limit <n>', 'page size, 1 to 1000 (default: 50)', limitOf)
    .option('--cursor <cursor>', 'the cursor the previous page printed')
    .option('--json', 'print JSON');
  list.action(withTarget(list, (t) => listCommand(t.stores, list.opts(), io)));

  const show = program
    .command('show')
    .description('show one execution: state, calls, writers')
    .argument('<id>', 'execution id')
    .option('--json', 'print JSON');
  show.action((id: string) => withTarget(show, (t) => showCommand(t.stores, id, show.opts(), io))());

  const history = program
    .command('history')
    .description("print an execution's log, one event a line")
    .argument('<id>', 'execution id')
    .option('--from <seq>', 'start at this seq (default: 0)', seqOf)
    .option('--follow', 'keep printing new events until the execution ends (Ctrl-C stops)')
    .option('--json', 'print one JSON envelope a line');
  history.action((id: string) =>
    withTarget(history, (t) => historyCommand(t.stores, id, { ...history.opts(), signal }, io))(),
  );

  const recover = program
    .command('recover')
    .description('resume executions whose owner is gone (pending or running, lease expired)')
    .option('--dry-run', 'only list them; write nothing')
    .option('--workflows <module>', 'ES module exporting the workflow definitions (needed to resume)')
    .option(
      '--lease-ttl <ms>',
      'abandoned after this long without a live lease or an event (default: 30000)',
      msOf,
    )
    .option('--json', 'print JSON');
  recover.action(
    withTarget(recover, (t) => {
      const o = recover.opts<{ dryRun?: boolean; workflows?: string; leaseTtl?: number; json?: boolean }>();
      return recoverCommand(
        t.stores,
        { ...o, ...(o.leaseTtl === undefined ? {} : { leaseTtlMs: o.leaseTtl }) },
        io,
      );
    }),
  );

  const dead = program
    .command('dead-letters')
    .description('list dead-lettered executions and why')
    .option('--workflow <name>', 'only this workflow')
    .option('--limit <n>', 'page size, 1 to 1000 (default: 50)', limitOf)
    .option('--cursor <cursor>', 'the cursor the previous page printed')
    .option('--json', 'print JSON');
  dead.action(withTarget(dead, (t) => deadLettersCommand(t.stores, dead.opts(), io)));

  const cancel = program
    .command('cancel')
    .description('request the cancellation of an execution (a node that runs it ends it cancelled)')
    .argument('<id>', 'execution id')
    .option('--reason <text>', 'recorded with the request (default: "cancelled with skein cancel")')
    .option('--json', 'print JSON');
  cancel.action((id: string) => withTarget(cancel, (t) => cancelCommand(t.stores, id, cancel.opts(), io))());

  const resume = program
    .command('resume')
    .description(
      're-drive a failed or dead-lettered execution from its log (a node that runs it takes it over)',
    )
    .argument('<id>', 'execution id')
    .option('--reason <text>', 'recorded with the resume (default: "resumed with skein resume")')
    .option('--json', 'print JSON');
  resume.action((id: string) => withTarget(resume, (t) => resumeCommand(t.stores, id, resume.opts(), io))());

  const sig = program
    .command('signal')
    .description("send a signal to an execution's inbox")
    .argument('<id>', 'execution id')
    .argument('<name>', 'signal name')
    .argument('<json>', 'payload as JSON, e.g. true or \'{"ok":1}\'')
    .option('--id <signalId>', 'signal id, so a retried send is not delivered twice (default: a new ULID)')
    .option('--json', 'print JSON');
  sig.action((id: string, name: string, payload: string) =>
    withTarget(sig, (t) => signalCommand(t.stores, id, name, payload, sig.opts(), io))(),
  );

  const ui = program
    .command('ui')
    .description('serve the web inspector (read-only unless --allow-actions)')
    .option('--port <n>', 'port (default: 7878; 0 picks a free one)', portOf)
    .option('--host <host>', 'address to bind (default: 127.0.0.1)')
    .option('--allow-actions', 'let the page cancel and signal executions');
  ui.action(withTarget(ui, (t) => uiCommand(t.stores, t.label, { ...ui.opts(), signal }, io)));
  return program;
}

/** Print what went wrong and how to fix it; return the exit code. */
function report(error: unknown, io: Io): number {
  if (error instanceof CommanderError) {
    // commander printed its own message (and the help hint) already.
    return error.code === 'commander.helpDisplayed' ||
      error.code === 'commander.version' ||
      error.exitCode === 0
      ? ExitCodes.ok
      : ExitCodes.usage;
  }
  if (error instanceof CliError) {
    io.err(`skein: ${error.message}\n`);
    return error.exitCode;
  }
  if (error instanceof SkeinError) {
    const hint =
      error.code === 'EXECUTION_NOT_FOUND'
        ? ' (run skein list to see the ids)'
        : error.code === 'INVALID_INPUT'
          ? ' (check the flags)'
          : '';
    io.err(`skein: ${error.message}${hint}\n`);
    return error.code === 'INVALID_INPUT' ? ExitCodes.usage : ExitCodes.failure;
  }
  io.err(`skein: ${error instanceof Error ? error.message : String(error)}\n`);
  return ExitCodes.failure;
}

function statuses(text: string): ExecutionStatus[] {
  const list = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const bad = list.filter((s) => !(ExecutionStatuses as readonly string[]).includes(s));
  if (list.length === 0 || bad.length > 0)
    throw new InvalidArgumentError(
      `unknown status ${bad.join(', ') || '(none)'}; use ${ExecutionStatuses.join(', ')}`,
    );
  return list as ExecutionStatus[];
}

function integer(text: string, min: number, max: number, what: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text.trim()) || !Number.isSafeInteger(n) || n < min || n > max)
    throw new InvalidArgumentError(`${what} must be an integer from ${min} to ${max}, got "${text}"`);
  return n;
}

const limitOf = (text: string) => integer(text, 1, 1000, 'the limit');
const seqOf = (text: string) => integer(text, 0, Number.MAX_SAFE_INTEGER, 'the seq');
const msOf = (text: string) => integer(text, 1, 2_147_483_647, 'the time in ms');
const portOf = (text: string) => integer(text, 0, 65_535, 'the port');
