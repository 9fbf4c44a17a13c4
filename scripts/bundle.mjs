/**
 * Bundles the built CLI (dist/src/cli.js, from tsc) into dist/bin/: our code and the packages every start needs
 * (express and its parsers, zod, pino, @x402/core) in a few files, so a server or an MCP stdio process starts without
 * resolving and compiling hundreds of small modules (MCP clients start a stdio server for each conversation). Every
 * other package stays external and loads from node_modules when first used (chain SDKs, the MCP SDK, drivers).
 */
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { build } from 'esbuild';

const { dependencies } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
// mppx is a devDependency and so bundled too (into the chunk its first credential loads): as a dependency of the
// package it made npm loop without end in projects that use viem 2.57.20, whose optional peer is mppx >= 0.17
// (docs/install.md, "Dependency pins").
/** Pure-JavaScript packages loaded at every start, bundled. */
const BUNDLED = new Set(['express', 'zod', 'pino', '@x402/core']);
const external = Object.keys(dependencies)
  .filter((name) => !BUNDLED.has(name))
  .flatMap((name) => [name, `${name}/*`]);

/**
 * zod's `z` namespace, `z.core` and zod/mini re-export every message locale (`z.locales`, over 350 KB of the start-up
 * chunk's source, compiled at every start); only English, the default, is used: the bundle's `z.locales` holds `en`.
 */
const englishOnly = {
  name: 'zod-english-only',
  setup(bundle) {
    bundle.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      /[\\/]zod[\\/]v4[\\/](classic|core|mini)$/.test(args.resolveDir)
        ? { path: join(args.resolveDir, '../locales/en.js').replace(/\\/g, '/'), namespace: 'zod-locales' }
        : undefined,
    );
    bundle.onLoad({ filter: /.*/, namespace: 'zod-locales' }, (args) => ({
      contents: `export { default as en } from ${JSON.stringify(args.path)};`,
      resolveDir: dirname(args.path),
    }));
  },
};

/**
 * Bundled JSON (mime-db's table, iconv-lite's code pages: over 700 KB of the express chunk) becomes
 * `JSON.parse('…')` of a string instead of an object literal: V8 scans a string far faster than it pre-parses a
 * literal at every start, and parses the JSON only when the module is first required.
 */
const jsonAsString = {
  name: 'json-as-string',
  setup(bundle) {
    bundle.onLoad({ filter: /\.json$/ }, (args) => ({
      contents: `module.exports = JSON.parse(${JSON.stringify(JSON.stringify(JSON.parse(readFileSync(args.path, 'utf8'))))});`,
      loader: 'js',
    }));
  },
};

/**
 * iconv-lite's double-byte code pages (Shift JIS, EUC-JP, GBK, Big5…: 450 KB of tables) are required only to decode a
 * body in one of those charsets, and no body Tollbooth reads is: its JSON parser answers any charset but UTF-8/16/32
 * with 415 before decoding. Bundled, they were text every start decoded and kept in memory; here a table throws if a
 * future change ever asks for one.
 */
const noCodePageTables = {
  name: 'no-code-page-tables',
  setup(bundle) {
    bundle.onResolve({ filter: /^\.\/tables\/[\w-]+\.json$/ }, (args) =>
      /[\\/]iconv-lite[\\/]encodings$/.test(args.resolveDir) ? { path: args.path, namespace: 'no-table' } : undefined,
    );
    bundle.onLoad({ filter: /.*/, namespace: 'no-table' }, (args) => ({
      contents: `throw new Error(${JSON.stringify(`iconv-lite table ${args.path} is not bundled (Tollbooth decodes UTF-8/16/32 bodies only)`)});`,
      loader: 'js',
    }));
  },
};

/**
 * An ESM `import` of a Node built-in makes Node build an ES module facade of it at start-up, and the facade reads
 * every export once: on Node 22 `node:http`'s `WebSocket` getter then loads Node's own copy of undici (34 ms and
 * megabytes of heap at every start, though Tollbooth never uses it: its facilitator client is the `undici` package),
 * and `node:fs`'s stream getters load the streams. Bundled, our imports of built-ins become `require()` (CommonJS
 * interop reads an export only where the code uses it), as the bundled CommonJS packages already do.
 */
const builtinsRequired = {
  name: 'builtins-required',
  setup(bundle) {
    bundle.onResolve({ filter: /^node:[a-z_/]+$/ }, (args) =>
      args.kind === 'import-statement' ? { path: args.path, namespace: 'builtin-required' } : undefined,
    );
    bundle.onLoad({ filter: /.*/, namespace: 'builtin-required' }, (args) => ({
      contents: `module.exports = require(${JSON.stringify(args.path)});`,
      loader: 'js',
    }));
  },
};

/**
 * mime-types fills its extension and type tables from mime-db's 2,500 entries as it loads, and express's body parsers
 * load it at every start (about 5 ms on Node 22); the tables are read only to look up a type given as an extension or
 * a file name, which no Tollbooth answer does. Bundled, the tables are filled on their first read and mime-db is parsed
 * on its first use; the module's answers are the same. A version whose source differs stops the build.
 */
const lazyMimeTables = {
  name: 'lazy-mime-tables',
  setup(bundle) {
    bundle.onLoad({ filter: /[\\/]mime-types[\\/]index\.js$/ }, (args) => {
      const edits = [
        [
          /^var db = require\('mime-db'\)$/m,
          "var loadedDb\nfunction mimeDb () { return loadedDb || (loadedDb = require('mime-db')) }",
        ],
        [/\bdb\[/g, 'mimeDb()['],
        [/Object\.keys\(db\)/g, 'Object.keys(mimeDb())'],
        [
          /^exports\.extensions = Object\.create\(null\)$/m,
          "Object.defineProperty(exports, 'extensions', { enumerable: true, get: function () { return mimeTables().extensions } })",
        ],
        [
          /^exports\.types = Object\.create\(null\)$/m,
          "Object.defineProperty(exports, 'types', { enumerable: true, get: function () { return mimeTables().types } })",
        ],
        [
          /^populateMaps\(exports\.extensions, exports\.types\)$/m,
          'var tables\nfunction mimeTables () {\n  if (!tables) {\n    tables = { extensions: Object.create(null), types: Object.create(null) }\n    populateMaps(tables.extensions, tables.types)\n  }\n  return tables\n}',
        ],
      ];
      let contents = readFileSync(args.path, 'utf8');
      for (const [pattern, replacement] of edits) {
        if (!pattern.test(contents)) throw new Error(`lazy-mime-tables: ${pattern} not found in ${args.path}`);
        pattern.lastIndex = 0;
        contents = contents.replace(pattern, replacement);
      }
      return { contents, loader: 'js' };
    });
  },
};

rmSync(new URL('../dist/bin', import.meta.url), { recursive: true, force: true });
await build({
  // The CLI, and the worker threads' entries, which src/workers/entry.ts finds beside the chunk that starts them:
  // the tools' threads (src/workers/pool.ts) and the facilitator thread (src/payments/facilitators/facilitator-thread.ts).
  entryPoints: [
    { in: 'dist/src/cli.js', out: 'cli' },
    { in: 'dist/src/workers/tool-worker.js', out: 'tool-worker' },
    { in: 'dist/src/payments/facilitators/facilitator-worker.js', out: 'facilitator-worker' },
  ],
  outdir: 'dist/bin',
  bundle: true,
  splitting: true,
  platform: 'node',
  format: 'esm',
  target: 'node20.19',
  external,
  plugins: [englishOnly, noCodePageTables, lazyMimeTables, jsonAsString, builtinsRequired],
  // Bundled CommonJS packages (express) call require() for Node's built-ins.
  banner: {
    js: "import { createRequire as __tollboothRequire } from 'node:module'; const require = __tollboothRequire(import.meta.url);",
  },
  logLevel: 'warning',
  // Whitespace and syntax only: 22% fewer bytes for V8 to decode and pre-parse at every start (measured ~15 ms of a
  // server's ~550 ms to its first 402); identifiers keep their names, so stack traces still name every function.
  minifyWhitespace: true,
  minifySyntax: true,
});

// Every chunk must be ASCII: V8 keeps a script's source in the heap, and one non-ASCII character (esbuild escapes
// them in strings, not in a regular expression's character class) makes it two bytes per character — the runtime
// chunk's 137 KB took 275 KB at every start. Write such characters as \u escapes in the source.
const binDir = new URL('../dist/bin/', import.meta.url);
for (const file of readdirSync(binDir).filter((name) => name.endsWith('.js'))) {
  const text = readFileSync(new URL(file, binDir), 'latin1');
  const at = text.search(/[^\x00-\x7f]/);
  if (at >= 0)
    throw new Error(
      `dist/bin/${file} is not ASCII at ${at}: …${text.slice(Math.max(0, at - 40), at + 10)}… (use a \\u escape)`,
    );
}
