/** A counting semaphore that hands out permits first come, first served. */
export class Semaphore {
  private inUse = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private permits: number) {}

  /** Permits held right now. */
  get held(): number {
    return this.inUse;
  }

  /** Change the number of permits; waiters are let in as room appears. */
  resize(permits: number): void {
    this.permits = permits;
    this.wake();
  }

  /** Wait for a permit; call the returned function exactly once to give it back. */
  async acquire(): Promise<() => void> {
    if (this.inUse >= this.permits || this.waiting.length > 0) {
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.inUse++;
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.inUse--;
      this.wake();
    };
  }

  private wake(): void {
    while (this.inUse < this.permits && this.waiting.length > 0) {
      this.inUse++;
      this.waiting.shift()!();
    }
  }
}
