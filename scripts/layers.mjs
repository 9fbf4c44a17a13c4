/**
 * The one list of the layers the agent side and the server stand on, and what each may import: read by
 * eslint.config.js (no-restricted-imports) and by scripts/import-graph.mjs (test/architecture.test.ts).
 *
 * - The shared layer (src/shared/ and schemas/) imports only itself.
 * - The agent side (src/agent/) imports only itself and the shared layer (the store's opener is handed to it by the
 *   composition root), and reaches no server module even through other files (scripts/import-graph.mjs follows
 *   imports transitively).
 * - The server never imports the agent side; only the composition root (src/cli/) wires the two together.
 */
import { posix } from 'node:path';

/** The agent side: the paying MCP proxy (remote mode) and `tollbooth call`. */
export const AGENT = 'src/agent';
/** The one folder that may import both sides: the command line, which wires them. */
export const COMPOSITION_ROOT = 'src/cli';

/**
 * The shared layer: the folders both sides import (errors, log, the network table, the chain readers of "was this
 * payment used?", the spending ledger's port); each imports nothing outside this list.
 */
export const SHARED = ['src/shared', 'schemas'];

/** Server modules the agent side may still import directly: none (kept as a list so a port stays explicit if one returns). */
export const AGENT_PORTS = [];

/** The transports: thin encoders of the pipeline's one answer. */
export const TRANSPORTS = ['src/http', 'src/mcp'];
/** The one module of src/payments/ a transport may import: the payment answer's types. */
export const PAYMENT_ANSWER = 'src/payments/answer/types.ts';

/** Whether a repository path is one of `entries` (a file) or lies under one (a folder). */
export function within(path, entries) {
  return entries.some((entry) => path === entry || path.startsWith(`${entry}/`));
}

const asImported = (path) => path.replace(/\.ts$/, '.js');

/**
 * `no-restricted-imports` patterns (gitignore style, last match wins) that refuse every relative import of a file
 * directly in `dir` except into `dir` itself and the `allowed` entries.
 */
export function onlyImports(dir, allowed) {
  // Each level up is refused, its parent folder itself let through so a deeper allowed entry can be let through too.
  const patterns = ['../*', '!../..', '../../*', '!../../..', '../../../*'];
  const seen = new Set();
  for (const entry of allowed) {
    if (within(dir, [entry])) continue;
    const parts = posix.relative(dir, asImported(entry)).split('/');
    const up = parts.filter((p) => p === '..').length;
    for (let i = up + 1; i < parts.length; i++) {
      const folder = parts.slice(0, i).join('/');
      if (seen.has(folder)) continue;
      seen.add(folder);
      patterns.push(`!${folder}`, `${folder}/*`);
    }
    patterns.push(`!${parts.join('/')}`);
  }
  return patterns;
}

/** `no-restricted-imports` patterns that refuse a relative import of the agent folder from any server file (src/, tools/). */
export const NO_AGENT_IMPORTS = [
  './agent',
  '../agent',
  '../../agent',
  '../../../agent',
  '../src/agent',
  '../../src/agent',
];
