/** Workflow definitions and the registry a runtime resolves them from. */
import type { z } from 'zod';
import type { WorkflowContext } from './context-api.js';
import { workflowSpecSchema } from './definition-schemas.js';
import { describeThrown } from './describe-thrown.js';
import { checkedErrorClasses } from './error-classes.js';
import {
  DuplicateWorkflowError,
  type ErrorClass,
  InvalidInputError,
  UnknownWorkflowError,
  type ValidationIssue,
} from './errors.js';

/** A zod schema (or anything with zod's `safeParse`). */
export type Schema<T = unknown, In = unknown> = z.ZodType<T, In>;

/** The payload schemas of the signals a workflow declares, by signal name. */
export type SignalSchemas = Readonly<Record<string, Schema>>;

/**
 * The messages a workflow declares, as types: what `ctx.waitForSignal`, `runtime.signal` and
 * typed handles check names and payloads against at compile time. One object for every kind
 * of message, so a new kind adds a field here rather than a type parameter to every
 * definition, context and handle. `defineWorkflow` infers it from its spec; a workflow that
 * declares no signals has this type itself (any name, payloads `unknown`).
 */
export interface WorkflowMessages {
  /** Declared signals: name to payload schema. */
  readonly signals: SignalSchemas;
  /** Declared updates: name to payload schema. */
  readonly updates: UpdateSchemas;
}

/** The payload schemas of the updates a workflow declares, by update name. */
export type UpdateSchemas = Readonly<Record<string, Schema>>;

/** The update map of `M`. */
type UpdatesOf<M extends WorkflowMessages> = M['updates'];

/** Names of the updates `M` declares (`string` when it declares none). */
export type UpdateName<M extends WorkflowMessages> = keyof UpdatesOf<M> & string;

/** What `ctx.onUpdate(name, handler)`'s handler receives: the output of the declared schema. */
export type UpdatePayload<M extends WorkflowMessages, K extends UpdateName<M>> = z.output<UpdatesOf<M>[K]>;

/** What a sender passes for update `name`: the input of the declared schema. */
export type UpdateInput<M extends WorkflowMessages, K extends UpdateName<M>> = z.input<UpdatesOf<M>[K]>;

/** Names of the signals `M` declares (`string` when it declares none). */
export type SignalName<M extends WorkflowMessages> = keyof M['signals'] & string;

/** What `ctx.waitForSignal(name)` resolves with: the output of the declared schema. */
export type SignalPayload<M extends WorkflowMessages, K extends SignalName<M>> = z.output<M['signals'][K]>;

/** What a sender passes for signal `name`: the input of the declared schema. */
export type SignalInput<M extends WorkflowMessages, K extends SignalName<M>> = z.input<M['signals'][K]>;

/** The declared messages of a workflow definition. */
export type MessagesOf<W> =
  W extends WorkflowDefinition<infer _In, infer _Out, infer _Raw, infer M> ? M : never;

/** What {@link defineWorkflow} takes; `S` is the type of `signals`. */
export interface WorkflowSpec<
  In,
  Out,
  Raw = In,
  S extends SignalSchemas = SignalSchemas,
  U extends UpdateSchemas = UpdateSchemas,
> {
  /** Unique name; recorded with each execution. */
  name: string;
  /** Version of the code; each execution is pinned to the version it started with (default: 1). */
  version?: number;
  /** Schema of the input; invalid input is refused before anything is written. */
  input: Schema<In, Raw>;
  /** Schema of the output, checked before the execution completes (default: none). */
  output?: Schema<Out>;
  /**
   * Signals the workflow accepts, by name, with the schema of each payload: `runtime.signal`
   * refuses an undeclared name or a payload that fails its schema before anything is written,
   * and `ctx.waitForSignal` parses with it unless given another (default: none accepted).
   */
  signals?: S;
  /**
   * Updates the workflow accepts, by name, with the schema of each payload: `runtime.update`
   * refuses an undeclared name or a payload that fails its schema before anything is written,
   * and the body's `ctx.onUpdate(name, handler)` receives the payload parsed with it
   * (default: none accepted).
   */
  updates?: U;
  /**
   * Error classes of your own that the body tells apart (`instanceof`): a recorded error of
   * one of these classes (a step's failure, a child's error) comes back as an instance of it,
   * live and on replay alike. Any other class comes back as its nearest built-in or Skein
   * ancestor (`Error`, `TypeError`, …) with its name, message, fields and cause; see
   * docs/errors.md (default: none).
   */
  errors?: readonly ErrorClass[];
  /** The workflow body. Every side effect belongs in `ctx.step`. */
  run(ctx: WorkflowContext<{ readonly signals: S; readonly updates: U }>, input: In): Promise<Out>;
}

/**
 * A registered workflow. `Raw` is what callers pass; `In` what `run` receives; `M` the
 * messages it declares (see {@link WorkflowMessages}).
 */
export interface WorkflowDefinition<
  In = unknown,
  Out = unknown,
  Raw = In,
  M extends WorkflowMessages = WorkflowMessages,
> {
  readonly name: string;
  readonly version: number;
  readonly input: Schema<In, Raw>;
  readonly output: Schema<Out> | undefined;
  /** Declared signals and their payload schemas (empty when none). */
  readonly signals: M['signals'];
  /** Declared updates and their payload schemas (empty when none). */
  readonly updates?: Readonly<Record<string, Schema>>;
  /** Error classes the codec revives for this workflow (empty when none). */
  readonly errors?: readonly ErrorClass[];
  run(ctx: WorkflowContext<M>, input: In): Promise<Out>;
}

/** Any workflow definition. */
// biome-ignore lint/suspicious/noExplicitAny: variance over user input types needs the escape hatch here only.
export type AnyWorkflow = WorkflowDefinition<any, any, any, any>;

/**
 * Define a workflow. Its declared signals type the body's `ctx.waitForSignal` and the
 * senders' `handle.signal`: an undeclared name or a payload of another type fails to compile.
 * A malformed definition is refused with `InvalidInputError`, naming every bad field.
 * @example
 * const order = defineWorkflow({
 *   name: 'order',
 *   input: z.object({ sku: z.string() }),
 *   signals: { approve: z.boolean() },
 *   async run(ctx, input) {
 *     const ok = await ctx.waitForSignal('approve', { timeoutMs: 86_400_000 }); // boolean | undefined
 *     return ok ? ctx.step('reserve', () => reserve(input.sku)) : 'rejected';
 *   },
 * });
 */
export function defineWorkflow<
  In,
  Out,
  Raw = In,
  S extends SignalSchemas = SignalSchemas,
  U extends UpdateSchemas = UpdateSchemas,
>(
  spec: WorkflowSpec<In, Out, Raw, S, U>,
): WorkflowDefinition<In, Out, Raw, { readonly signals: S; readonly updates: U }> {
  const where = `defineWorkflow(${describeName(spec?.name)})`;
  parseWith(workflowSpecSchema, spec, where, '');
  const version = spec.version ?? 1;
  // No `signals` given: S is its default, the open map, and an empty one is an instance of it.
  const signals = Object.freeze({ ...(spec.signals ?? {}) }) as S;
  const updates = Object.freeze({ ...(spec.updates ?? {}) });
  const errors = Object.freeze(checkedErrorClasses(spec.errors ?? [], where));
  return Object.freeze({
    name: spec.name,
    version,
    input: spec.input,
    output: spec.output,
    signals,
    updates,
    errors,
    run: spec.run,
  });
}

/** A definition's name as its refusals quote it: the string, or what was given instead. */
export function describeName(name: unknown): string {
  return typeof name === 'string' ? JSON.stringify(name) : typeof name;
}

/**
 * The schema `workflow` declares for signal `name`, or undefined. Only the workflow's own
 * declarations count: a name such as `__proto__`, `constructor` or `toString` never reaches
 * what every object inherits.
 */
export function declaredSignal(workflow: AnyWorkflow, name: string): Schema | undefined {
  const signals: SignalSchemas | undefined = workflow.signals;
  return signals !== undefined && Object.hasOwn(signals, name) ? signals[name] : undefined;
}

/** The schema `workflow` declares for update `name`, or undefined (own declarations only, as for signals). */
export function declaredUpdate(workflow: AnyWorkflow, name: string): Schema | undefined {
  const updates = workflow.updates as Readonly<Record<string, Schema>> | undefined;
  return updates !== undefined && Object.hasOwn(updates, name) ? updates[name] : undefined;
}

/** Parse `value` with `schema`; throw {@link InvalidInputError} naming each bad field. */
export function parseWith<T>(schema: Schema<T>, value: unknown, where: string, root: string): T {
  let result: ReturnType<Schema<T>['safeParse']>;
  try {
    result = schema.safeParse(value);
  } catch (error) {
    // The schema read a field whose getter threw (or a refinement threw): refused all the same.
    const message = `reading it threw ${describeThrown(error)}`;
    throw new InvalidInputError(where, [{ path: root, message }], { cause: error });
  }
  if (result.success) return result.data;
  const issues: ValidationIssue[] = result.error.issues.map((issue) => ({
    path: [...(root === '' ? [] : [root]), ...issue.path.map(String)].join('.'),
    message: issue.message,
  }));
  throw new InvalidInputError(where, issues, { cause: result.error });
}

/** The workflows a runtime knows, by name and version. */
export class WorkflowRegistry {
  private readonly byName = new Map<string, Map<number, AnyWorkflow>>();

  constructor(workflows: readonly AnyWorkflow[]) {
    for (const workflow of workflows) {
      const versions = this.byName.get(workflow.name) ?? new Map<number, AnyWorkflow>();
      if (versions.has(workflow.version)) {
        throw new DuplicateWorkflowError(workflow.name, workflow.version);
      }
      versions.set(workflow.version, workflow);
      this.byName.set(workflow.name, versions);
    }
  }

  /** The definition of `name` at `version` (default: the newest), or throw {@link UnknownWorkflowError}. */
  get(name: string, version?: number): AnyWorkflow {
    const versions = this.byName.get(name);
    const found =
      versions === undefined ? undefined : version === undefined ? newest(versions) : versions.get(version);
    if (found === undefined) throw new UnknownWorkflowError(name, version, this.names());
    return found;
  }

  /** True when `name` (at `version`, if given) is registered. */
  has(name: string, version?: number): boolean {
    const versions = this.byName.get(name);
    return versions !== undefined && (version === undefined || versions.has(version));
  }

  /** The registered workflow names, each once (without versions). */
  workflowNames(): string[] {
    return [...this.byName.keys()];
  }

  /** `name@version` of everything registered. */
  names(): string[] {
    return [...this.byName].flatMap(([name, versions]) => [...versions.keys()].map((v) => `${name}@${v}`));
  }
}

function newest(versions: Map<number, AnyWorkflow>): AnyWorkflow | undefined {
  let best: AnyWorkflow | undefined;
  for (const workflow of versions.values())
    if (best === undefined || workflow.version > best.version) best = workflow;
  return best;
}
