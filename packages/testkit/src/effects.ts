/**
 * Effect counting: a workflow under a crash test wraps each step function with
 * `effects.track(name, fn)`, so the kit can tell how often each step attempt really ran.
 */
import type { StepInfo } from '@skein/workflow-runtime';

/** One run of a tracked step function. */
export interface EffectRecord {
  /** The step's name, as given to `track`. */
  name: string;
  /** `info.attempt` of the run. */
  attempt: number;
  /** Whether it ran before the simulated crash or during recovery. */
  phase: EffectPhase;
}

/** `before-crash`: the attempt that dies (and the calls before it); `recovery`: fresh runtimes after it. */
export type EffectPhase = 'before-crash' | 'recovery';

/**
 * Counts the runs of step functions. The crash runner hands a fresh one to the workflow
 * factory for every run.
 * @example
 * crashAtEveryWrite((effects) => defineWorkflow({
 *   name: 'pay', version: 1, input: z.object({ amount: z.number() }),
 *   run: (ctx, input) => ctx.step('charge', effects.track('charge', () => charge(input.amount))),
 * }), { amount: 5 });
 */
export class Effects {
  private readonly runs: EffectRecord[] = [];
  private readonly names = new Set<string>();
  /** The phase new runs are recorded in; the crash runner moves it to `recovery` (default: `before-crash`). */
  phase: EffectPhase = 'before-crash';

  /**
   * Wrap a step function so each run is counted under `name`.
   * @param name the step's name, the same as passed to `ctx.step`.
   */
  track<T>(name: string, fn: (info: StepInfo) => T | Promise<T>): (info: StepInfo) => T | Promise<T> {
    this.names.add(name);
    return (info) => {
      this.runs.push({ name, attempt: info.attempt, phase: this.phase });
      return fn(info);
    };
  }

  /** Names passed to `track` so far; the crash checks count only these steps. */
  get tracked(): ReadonlySet<string> {
    return this.names;
  }

  /** Every run recorded, in order. */
  get records(): readonly EffectRecord[] {
    return this.runs;
  }

  /** How often step `name` ran (only `attempt`, when given; only in `phase`, when given). */
  count(name: string, attempt?: number, phase?: EffectPhase): number {
    return this.runs.filter(
      (run) =>
        run.name === name &&
        (attempt === undefined || run.attempt === attempt) &&
        (phase === undefined || run.phase === phase),
    ).length;
  }
}
