/**
 * `defineSchedule`: a workflow started at every due time of a cron pattern or a fixed interval
 * (docs/schedules.md). Due times are a pure function of the definition, the same on every node:
 * cron patterns through croner (adr/0045), intervals aligned to the epoch.
 */
import { Cron } from 'croner';
import { z } from 'zod';
import { InvalidInputError, UnknownScheduleError } from '../errors.js';
import { nameSchema } from '../ids.js';
import { type AnyWorkflow, parseWith, type WorkflowDefinition } from '../workflow.js';

/** What to do at a due time while the execution of the previous one is not finished. */
export type ScheduleOverlap = 'skip' | 'buffer-one' | 'allow';

/** Which due times missed while no node ran the schedule still run. */
export type ScheduleCatchUp = 'all' | 'latest' | 'none';

/** Options of {@link defineSchedule}. */
export interface ScheduleOptions<In, Out, Raw> {
  /** Unique among the runtime's schedules; part of every execution id it starts. */
  name: string;
  /** A cron pattern (5 or 6 fields, seconds first when 6), read in `timezone`; or give `everyMs`. */
  cron?: string;
  /** A fixed interval in milliseconds, due times aligned to the epoch; or give `cron`. */
  everyMs?: number;
  /** IANA time zone of `cron` (default: `UTC`). */
  timezone?: string;
  workflow: WorkflowDefinition<In, Out, Raw>;
  /** The input of every execution (validated here, by the workflow's schema). */
  input: Raw;
  /**
   * While the previous execution is not finished: `skip` the due time, `buffer-one` (run the
   * first such due time once it finishes, skip the rest), or `allow` it to run alongside (default: `skip`).
   */
  overlap?: ScheduleOverlap;
  /**
   * Due times that passed while no node ran the schedule: run `all` (in order), only the
   * `latest`, or `none` of them (default: `latest`).
   */
  catchUp?: ScheduleCatchUp;
}

/** A schedule, as `createRuntime({ schedules })` takes it. */
export interface ScheduleDefinition {
  readonly name: string;
  readonly workflow: AnyWorkflow;
  readonly input: unknown;
  readonly overlap: ScheduleOverlap;
  readonly catchUp: ScheduleCatchUp;
  /** The first due time strictly after `at`, or null when there is none. */
  dueAfter(at: number): number | null;
}

const optionsSchema = z
  .object({
    name: nameSchema,
    cron: z.string().min(1).optional(),
    everyMs: z.number().int().positive().optional(),
    timezone: z.string().min(1).optional(),
    workflow: z.custom<AnyWorkflow>(
      (value) => typeof value === 'object' && value !== null,
      'a workflow definition',
    ),
    input: z.unknown(),
    overlap: z.enum(['skip', 'buffer-one', 'allow']).optional(),
    catchUp: z.enum(['all', 'latest', 'none']).optional(),
  })
  .strict();

/**
 * Define a schedule. The leader node's `Supervisor` starts its workflow at every due time, one
 * execution per due time across every node (its id is `schedule:<name>:<due time, ISO>`).
 * @example
 * const nightly = defineSchedule({ name: 'nightly', cron: '0 3 * * *', workflow: report, input: {} });
 * const runtime = createRuntime({ stores, workflows: [report], schedules: [nightly], lease: { ttlMs: 10_000 } });
 */
export function defineSchedule<In, Out, Raw>(options: ScheduleOptions<In, Out, Raw>): ScheduleDefinition {
  const parsed = parseWith(optionsSchema, options, 'defineSchedule options', 'options');
  if ((parsed.cron === undefined) === (parsed.everyMs === undefined))
    throw new InvalidInputError('defineSchedule options', [
      { path: 'options.cron', message: 'give exactly one of cron and everyMs' },
    ]);
  parseWith(options.workflow.input, options.input, `input of schedule "${parsed.name}"`, 'options.input');
  const dueAfter = parsed.cron === undefined ? every(parsed.everyMs!) : cron(parsed.cron, parsed.timezone);
  return Object.freeze({
    name: parsed.name,
    workflow: options.workflow as AnyWorkflow,
    input: options.input,
    overlap: parsed.overlap ?? 'skip',
    catchUp: parsed.catchUp ?? 'latest',
    dueAfter,
  });
}

function every(everyMs: number): (at: number) => number {
  return (at) => (Math.floor(at / everyMs) + 1) * everyMs;
}

function cron(pattern: string, timezone = 'UTC'): (at: number) => number | null {
  let job: Cron;
  try {
    job = new Cron(pattern, { timezone, paused: true });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new InvalidInputError('defineSchedule options', [{ path: 'options.cron', message }], {
      cause: error,
    });
  }
  return (at) => job.nextRun(new Date(at))?.getTime() ?? null;
}

/** The execution id of a schedule's due time: the same on every node. */
export function scheduledExecutionId(schedule: string, dueAt: number): string {
  return `schedule:${schedule}:${new Date(dueAt).toISOString()}`;
}

/** The schedules of one runtime, by name. */
export class ScheduleRegistry {
  private readonly byName = new Map<string, ScheduleDefinition>();

  constructor(schedules: readonly ScheduleDefinition[]) {
    schedules.forEach((schedule, i) => {
      if (this.byName.has(schedule.name))
        throw new InvalidInputError('createRuntime options', [
          { path: `schedules.${i}.name`, message: `repeats the schedule name "${schedule.name}"` },
        ]);
      this.byName.set(schedule.name, schedule);
    });
  }

  /** Every registered schedule. */
  all(): ScheduleDefinition[] {
    return [...this.byName.values()];
  }

  /** The registered schedule called `name`; `UnknownScheduleError` otherwise. */
  get(name: string): ScheduleDefinition {
    const found = this.byName.get(name);
    if (found === undefined) throw new UnknownScheduleError(name, [...this.byName.keys()]);
    return found;
  }
}
