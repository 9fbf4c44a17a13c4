/**
 * The import graph of our own TypeScript (src/, tools/, schemas/), read with the compiler's own module resolution,
 * and its cycles (strongly connected components of more than one file, or a file importing itself). Type-only
 * imports count too: a cycle through types still ties the files' meaning together. `node scripts/import-graph.mjs`
 * prints the cycles, the imports that break the layers of scripts/layers.mjs and every server file the agent side
 * reaches through any chain of imports, and exits 1 when there is one; test/architecture.test.ts runs the same checks.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { AGENT, AGENT_PORTS, COMPOSITION_ROOT, PAYMENT_ANSWER, SHARED, TRANSPORTS, within } from './layers.mjs';

const root = resolve(fileURLToPath(new URL('..', import.meta.url)));
const ROOTS = ['src', 'tools', 'schemas'];

function walk(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : /\.ts$/.test(name) && !name.endsWith('.d.ts') ? [path] : [];
  });
}

/** `{ file: [imported files] }` with paths relative to `base` (the repository unless given), our own files only. */
export function importGraph(base = root) {
  const files = ROOTS.flatMap((dir) => walk(join(base, dir)));
  const options = {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    allowImportingTsExtensions: false,
  };
  const host = ts.createCompilerHost(options);
  const graph = {};
  for (const file of files) {
    const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    const targets = new Set();
    for (const { fileName } of info.importedFiles) {
      if (!fileName.startsWith('.')) continue;
      const resolved = ts.resolveModuleName(fileName, file, options, host).resolvedModule?.resolvedFileName;
      if (resolved && !resolved.includes('node_modules')) targets.add(relative(base, resolved));
    }
    graph[relative(base, file)] = [...targets].sort();
  }
  return graph;
}

/** The cycles of a graph: each strongly connected component with more than one file (Tarjan), and self-imports. */
export function cycles(graph) {
  let index = 0;
  const stack = [];
  const meta = new Map();
  const out = [];
  const visit = (v) => {
    meta.set(v, { index, low: index, onStack: true });
    index += 1;
    stack.push(v);
    for (const w of graph[v] ?? []) {
      if (!meta.has(w)) {
        visit(w);
        meta.get(v).low = Math.min(meta.get(v).low, meta.get(w).low);
      } else if (meta.get(w).onStack) meta.get(v).low = Math.min(meta.get(v).low, meta.get(w).index);
    }
    if (meta.get(v).low === meta.get(v).index) {
      const component = [];
      let w;
      do {
        w = stack.pop();
        meta.get(w).onStack = false;
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (graph[v] ?? []).includes(v)) out.push(component.sort());
    }
  };
  for (const v of Object.keys(graph)) if (!meta.has(v)) visit(v);
  return out;
}

/**
 * The imports that break the layers (scripts/layers.mjs), each with the rule it breaks: the shared layer importing
 * anything else, the agent side importing past the shared layer and its ports, the server importing the agent side, a
 * transport importing from src/payments/ anything but the payment answer's types.
 */
export function layerViolations(graph) {
  const ruleOf = (from, to) => {
    if (within(from, SHARED)) return within(to, SHARED) ? undefined : 'the shared layer imports only itself';
    if (within(from, [AGENT]))
      return within(to, [AGENT, ...SHARED, ...AGENT_PORTS])
        ? undefined
        : 'the agent side imports only itself, the shared layer and its ports';
    if (within(from, [COMPOSITION_ROOT])) return undefined;
    if (within(to, [AGENT])) return 'the server never imports the agent side';
    if (within(from, TRANSPORTS) && within(to, ['src/payments']) && to !== PAYMENT_ANSWER)
      return "a transport imports nothing of src/payments/ but the payment answer's types";
    return undefined;
  };
  return Object.entries(graph).flatMap(([from, targets]) =>
    targets.flatMap((to) => {
      const rule = ruleOf(from, to);
      return rule ? [{ from, to, rule }] : [];
    }),
  );
}

/**
 * Every file outside the agent side and the shared layer that the agent side reaches through any chain of imports,
 * each with the chain that reaches it (agent file first): the boundary holds only if this is empty.
 */
export function agentReach(graph) {
  const via = new Map();
  const queue = Object.keys(graph).filter((file) => within(file, [AGENT]));
  for (const file of queue) via.set(file, [file]);
  while (queue.length > 0) {
    const file = queue.shift();
    for (const next of graph[file] ?? []) {
      if (via.has(next)) continue;
      via.set(next, [...via.get(file), next]);
      queue.push(next);
    }
  }
  return [...via.entries()]
    .filter(([file]) => !within(file, [AGENT, ...SHARED]))
    .map(([file, chain]) => ({ file, chain }))
    .sort((a, b) => a.file.localeCompare(b.file));
}

// `node scripts/import-graph.mjs [root]`: the repository, or another tree laid out like it (the tests' fixtures).
if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const graph = importGraph(process.argv[2] ? resolve(process.argv[2]) : root);
  const found = cycles(graph);
  for (const c of found) process.stderr.write(`import cycle (${c.length} files): ${c.join(' ')}\n`);
  process.stderr.write(found.length === 0 ? 'no import cycles\n' : `${found.length} import cycle(s)\n`);
  const crossing = layerViolations(graph);
  for (const v of crossing) process.stderr.write(`layer: ${v.from} imports ${v.to} (${v.rule})\n`);
  process.stderr.write(crossing.length === 0 ? 'no layer violations\n' : `${crossing.length} layer violation(s)\n`);
  const reached = agentReach(graph);
  for (const r of reached) process.stderr.write(`agent reaches server file ${r.file}: ${r.chain.join(' -> ')}\n`);
  process.stderr.write(
    reached.length === 0 ? 'the agent side reaches no server file\n' : `${reached.length} server file(s) reached\n`,
  );
  process.exit(found.length === 0 && crossing.length === 0 && reached.length === 0 ? 0 : 1);
}
