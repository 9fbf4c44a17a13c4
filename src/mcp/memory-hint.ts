/**
 * Gives the memory of ended MCP sessions back after a mass turnover. Evicted or expired sessions are old-generation
 * garbage (each lived through many young collections); after V8's next full collection the pages they leave are still
 * committed, half empty, until a further full collection compacts and releases them, so a burst of new sessions leaves
 * the process tens of MB larger than its live heap. Once as many sessions have been ended as the table holds, one
 * full collection is run (on the next turn of the event loop, outside any request), so that the collection V8 runs
 * after the burst is the second and the emptied pages go back to the system. Nothing happens while sessions are not
 * being ended, so ordinary traffic never pays for it.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** The gc() this module fetched for itself when node runs without --expose-gc (null when it could not). */
let fetched: (() => void) | null | undefined;

/** The process's full garbage collection: `gc` when node runs with --expose-gc, else one fetched once for this module. */
function collector(): (() => void) | null {
  const exposed = (globalThis as { gc?: unknown }).gc;
  if (typeof exposed === 'function') return exposed as () => void;
  if (fetched !== undefined) return fetched;
  try {
    // The known way to reach gc() without starting node with --expose-gc: a context created while the flag is set
    // gets it. The flag is cleared again at once, so no later context (vm, worker) sees a `gc` global.
    setFlagsFromString('--expose-gc');
    const gc: unknown = runInNewContext('gc');
    fetched = typeof gc === 'function' ? (gc as () => void) : null;
  } catch {
    fetched = null;
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
  return fetched;
}

/**
 * A counter of ended sessions: call it once for each session the table ends; after every `turnover` of them it
 * schedules one full garbage collection. `run` replaces the collection (tests count the calls with it).
 */
export function collectAfterTurnover(turnover: number, run: () => void = () => collector()?.()): () => void {
  let ended = 0;
  let scheduled = false;
  return () => {
    if (++ended < turnover || scheduled) return;
    ended = 0;
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      run();
    });
  };
}
