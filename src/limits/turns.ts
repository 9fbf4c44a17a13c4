/**
 * Turns on the main thread. A burst of large requests (twenty 510 KB bodies arriving together) would otherwise be
 * parsed and hashed within one event-loop iteration, and a health check or a small call read in that iteration waits
 * behind all of them. Steps whose cost grows with the request take a turn first: turns are handed out in order, one
 * per loop iteration (each after a `setImmediate`), so the sockets are polled between two large steps and small
 * requests are answered in between. When nothing else waits, a turn costs one loop iteration.
 */

/** Hands out turns in order, one per event-loop iteration. */
export class Turns {
  private last: Promise<void> = Promise.resolve();
  private waiting = 0;

  /** Resolves when it is this caller's turn: one loop iteration after the previous turn was given. */
  take(): Promise<void> {
    this.waiting++;
    const turn = this.last.then(
      () =>
        new Promise<void>((resolve) =>
          setImmediate(() => {
            this.waiting--;
            resolve();
          }),
        ),
    );
    this.last = turn;
    return turn;
  }

  /** How many callers wait for a turn (for tests and metrics). */
  get queued(): number {
    return this.waiting;
  }
}

/** The main thread's turns: one per process, as there is one main thread. */
export const mainThreadTurns = new Turns();
