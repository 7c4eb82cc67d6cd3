/**
 * Runs tasks with the same key one after another, in submission order, and tasks with
 * different keys side by side. The event store queues appends per execution on it, so
 * appends one process submits for one execution apply in the order they were submitted (as
 * they do in a group-committed batch), while other executions use the rest of the pool.
 */
export class PerKeyQueue {
  private readonly tails = new Map<string, Promise<void>>();

  /** Run `task` after every earlier task of `key` has settled; resolves or rejects with its outcome. */
  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key);
    const result = previous === undefined ? task() : previous.then(task);
    // The tail only orders the next task; the outcome, rejection included, goes to this caller.
    // Settled, it forgets the key unless a later task has become the tail.
    const forget = (): void => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    };
    const tail: Promise<void> = result.then(forget, forget);
    this.tails.set(key, tail);
    return result;
  }

  /** Keys with a task queued or running. */
  get size(): number {
    return this.tails.size;
  }
}
