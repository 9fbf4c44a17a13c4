import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { WorkerEntry } from '../../src/workers/entry.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** The folders the bundled CLI is built from (tsconfig.build.json). */
const SOURCES = ['src', 'tools', 'schemas'];
const BUNDLE = join(ROOT, 'dist/bin');

/** The newest modification time (ms) of the files under `dir`. */
function newest(dir: string): number {
  let latest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    latest = Math.max(latest, entry.isDirectory() ? newest(path) : statSync(path).mtimeMs);
  }
  return latest;
}

/** The worker thread entries the bundled CLI builds beside its chunks (scripts/bundle.mjs). */
export type BundledEntry = 'facilitator-worker' | 'tool-worker';

let fresh: boolean | undefined;

/**
 * The bundled thread entry `dist/bin/<name>.js` when the build is newer than every source it is built from, as after
 * `npm test`'s build; otherwise undefined, and the thread runs the sources through tsx. A bundled entry starts with
 * about a third of the CPU time (no TypeScript loader in the thread) and runs the same code.
 */
export function builtEntry(name: BundledEntry): WorkerEntry | undefined {
  const file = join(BUNDLE, `${name}.js`);
  fresh ??=
    existsSync(join(BUNDLE, 'facilitator-worker.js')) &&
    existsSync(join(BUNDLE, 'tool-worker.js')) &&
    Math.min(
      statSync(join(BUNDLE, 'facilitator-worker.js')).mtimeMs,
      statSync(join(BUNDLE, 'tool-worker.js')).mtimeMs,
    ) >= Math.max(...SOURCES.map((d) => newest(join(ROOT, d))));
  return fresh ? { filename: pathToFileURL(file).href, execArgv: [] } : undefined;
}
