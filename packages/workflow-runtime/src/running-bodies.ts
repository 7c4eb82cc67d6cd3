/**
 * The runs whose body is in progress in one runtime, by execution. Runs of one id may overlap
 * (a dispatcher's redispatch after a deadline); almost always there is one, kept without a
 * set of its own.
 */

/** What is kept of a run: its execution's id. */
interface Body {
  readonly executionId: string;
}

/** The bodies in progress, by execution; see the module comment. */
export class RunningBodies<T extends Body> {
  private readonly byId = new Map<string, T | Set<T>>();

  /** Count `run` as running until {@link delete}. */
  add(run: T): void {
    const held = this.byId.get(run.executionId);
    if (held === undefined) this.byId.set(run.executionId, run);
    else if (held instanceof Set) held.add(run);
    else if (held !== run) this.byId.set(run.executionId, new Set([held, run]));
  }

  /** `run`'s body ended. */
  delete(run: T): void {
    const held = this.byId.get(run.executionId);
    if (held === run) this.byId.delete(run.executionId);
    else if (held instanceof Set) {
      held.delete(run);
      if (held.size === 0) this.byId.delete(run.executionId);
    }
  }

  /** Whether a body of `executionId` is in progress here. */
  has(executionId: string): boolean {
    return this.byId.has(executionId);
  }

  /** The bodies of `executionId` in progress here (a copy). */
  of(executionId: string): T[] {
    const held = this.byId.get(executionId);
    if (held === undefined) return [];
    return held instanceof Set ? [...held] : [held];
  }
}
