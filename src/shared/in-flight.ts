/** The one counter of work under way (calls, requests) that a closing process waits on: shutdown, stdio, remote stdio. */
export class InFlight {
  private active = 0;
  private readonly waiters = new Set<() => void>();

  /** How many are under way. */
  get count(): number {
    return this.active;
  }

  /** Counts one more under way. */
  enter(): void {
    this.active += 1;
  }

  /** Counts one fewer (never below none) and wakes whoever waits once none is left. */
  leave(): void {
    this.active = Math.max(0, this.active - 1);
    if (this.active === 0) for (const wake of [...this.waiters]) wake();
  }

  /** Runs `work`, counted while it runs. */
  async run<T>(work: () => Promise<T>): Promise<T> {
    this.enter();
    try {
      return await work();
    } finally {
      this.leave();
    }
  }

  /** Resolves true once none is under way, or false when `timeoutMs` passed first. */
  drain(timeoutMs: number): Promise<boolean> {
    if (this.active === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (drained: boolean) => {
        clearTimeout(timer);
        this.waiters.delete(wake);
        resolve(drained);
      };
      const wake = () => done(true);
      const timer = setTimeout(() => done(false), Math.max(0, timeoutMs));
      this.waiters.add(wake);
    });
  }
}
