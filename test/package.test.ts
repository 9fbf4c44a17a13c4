import { execFile } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = new URL('../', import.meta.url);
const pkg = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as {
  license: string;
  engines: { node: string };
  bin: Record<string, string>;
  files: string[];
  scripts: Record<string, string>;
};

/** The files `npm pack` would put in the tarball, from the tree as it is (dist/ built by `npm test`; no scripts run). */
async function packedFiles(): Promise<string[]> {
  const { stdout } = await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: root });
  const [report] = JSON.parse(stdout) as Array<{ files: Array<{ path: string }> }>;
  return report!.files.map((file) => file.path);
}

describe('the npm package', () => {
  it('holds the bundled CLI, the licence, the README, server.json, mcp.json and .env.example, and nothing else', async () => {
    const files = await packedFiles();
    expect(files).toEqual(
      expect.arrayContaining([
        'dist/bin/cli.js',
        'LICENSE',
        'README.md',
        'package.json',
        'server.json',
        'mcp.json',
        '.env.example',
      ]),
    );
    const extra = files.filter(
      (path) =>
        !/^dist\/bin\/[\w-]+\.js$/.test(path) &&
        !['LICENSE', 'README.md', 'package.json', 'server.json', 'mcp.json', '.env.example'].includes(path),
    );
    expect(extra).toEqual([]);
    expect(
      files.filter(
        (path) =>
          /^(src|test|tools|schemas|scripts|\.scratch|data|dist\/src)\//.test(path) || /\.(db|ts|map)$/.test(path),
      ),
    ).toEqual([]);
  });

  it('installs the tollbooth command as the bundle, which runs under node', () => {
    expect(pkg.bin).toEqual({ tollbooth: 'dist/bin/cli.js' });
    expect(readFileSync(new URL(pkg.bin.tollbooth!, root), 'utf8').split('\n')[0]).toBe('#!/usr/bin/env node');
  });

  it("loads Node's built-ins in its bundle with require, so no start builds an ES module facade of one", () => {
    // A facade reads every export: on Node 22, node:http's WebSocket getter loads Node's own undici (34 ms, 5 MB).
    const bin = new URL('dist/bin/', root);
    const chunks = readdirSync(bin).filter((name) => name.endsWith('.js'));
    expect(chunks.length).toBeGreaterThan(10);
    const imported = chunks.flatMap((name) =>
      [...readFileSync(new URL(name, bin), 'utf8').matchAll(/\bfrom\s*["'](node:[a-z_/]+)["']/g)].map((m) => m[1]),
    );
    // The banner's createRequire is the one left: it is what the others are required with.
    expect(new Set(imported)).toEqual(new Set(['node:module']));
    expect(imported.length).toBe(chunks.length);
  });

  it('declares the Node versions it runs on', () => {
    expect(pkg.engines.node).toBe('>=20.19');
  });

  it('builds before packing, and starts the built code without the compiler', () => {
    expect(pkg.scripts.prepack).toBe('npm run build');
    expect(pkg.scripts.start).not.toMatch(/build|tsc|tsx|esbuild/);
    expect(pkg.scripts.start).toMatch(/^exec node /);
  });

  it('is MIT licensed, with the LICENSE file saying so', () => {
    const licence = readFileSync(new URL('LICENSE', root), 'utf8');
    expect(pkg.license).toBe('MIT');
    expect(licence.split('\n')[0]).toBe('MIT License');
    expect(licence).toContain('Copyright (c) 2026 Tollbooth contributors');
  });
});
