/**
 * mppx (and the viem it brings) loads with the first MPP credential, not at start-up: issuing challenges, the Problem
 * Details types and the request encoding are our own code (kept equal to mppx's by tests), and only reading a
 * credential, checking it and writing a receipt need the library. Callers `await loadMppx()` once a credential is
 * present; the synchronous code after it reads the module with `mppx()`.
 */
type Mppx = typeof import('mppx');

let loading: Promise<Mppx> | undefined;
let loaded: Mppx | undefined;

/** Loads mppx once; resolves when `mppx()` can be used. */
export async function loadMppx(): Promise<Mppx> {
  loading ??= import('mppx').then((module) => (loaded = module));
  return loading;
}

/** The loaded mppx module; throws when no credential path awaited {@link loadMppx} first (a programming error). */
export function mppx(): Mppx {
  if (!loaded) throw new Error('mppx is not loaded yet: await loadMppx() before reading an MPP credential');
  return loaded;
}
