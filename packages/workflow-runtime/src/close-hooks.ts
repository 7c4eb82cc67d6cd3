/**
 * What a store's `close()` does before it releases anything (`Stores.beforeClose`): the work
 * registered by the runtimes on it, such as stopping their in-process maintenance, so that no
 * pass meets a closed connection.
 */

/** The hooks of one set of stores; `run()` is the first thing their `close()` does. */
export class CloseHooks {
  private readonly hooks = new Set<() => Promise<void>>();

  /** Register `hook`; returns the function that unregisters it. */
  add(hook: () => Promise<void>): () => void {
    this.hooks.add(hook);
    return () => {
      this.hooks.delete(hook);
    };
  }

  /** True when no hook is registered: a `close()` may release at once, in the same tick. */
  get empty(): boolean {
    return this.hooks.size === 0;
  }

  /** Run every hook at once and wait for all; rejects with the first failure once all have settled. */
  async run(): Promise<void> {
    const hooks = [...this.hooks];
    this.hooks.clear();
    const results = await Promise.allSettled(hooks.map((hook) => hook()));
    const failed = results.find((result): result is PromiseRejectedResult => result.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
  }
}
