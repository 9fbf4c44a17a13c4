/**
 * The import graph of our own TypeScript (src/, tools/, schemas/), read with the compiler's own module resolution,
 * and its cycles (strongly connected components of more than one file, or a file importing itself). Type-only
 * imports count too: a cycle through types still ties the files' meaning together. `node scripts/import-graph.mjs`
 * prints the cycles and exits 1 when there is one; test/architecture.test.ts runs the same check.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = resolve(fileURLToPath(new URL('..', import.meta.url)));
const ROOTS = ['src', 'tools', 'schemas'];

function walk(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : /\.ts$/.test(name) && !name.endsWith('.d.ts') ? [path] : [];
  });
}

/** `{ file: [imported files] }` with paths relative to the repository, our own files only. */
export function importGraph() {
  const files = ROOTS.flatMap((dir) => walk(join(root, dir)));
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
      if (resolved && !resolved.includes('node_modules')) targets.add(relative(root, resolved));
    }
    graph[relative(root, file)] = [...targets].sort();
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

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const found = cycles(importGraph());
  for (const c of found) process.stderr.write(`import cycle (${c.length} files): ${c.join(' ')}\n`);
  process.stderr.write(found.length === 0 ? 'no import cycles\n' : `${found.length} import cycle(s)\n`);
  process.exit(found.length === 0 ? 0 : 1);
}
