import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain ESM script without type declarations (also run by CI as `node scripts/import-graph.mjs`).
import { agentReach, cycles, importGraph, layerViolations } from '../scripts/import-graph.mjs';

const SCRIPT = fileURLToPath(new URL('../scripts/import-graph.mjs', import.meta.url));

const graph = importGraph() as Record<string, string[]>;
const edges = Object.entries(graph).flatMap(([from, targets]) => targets.map((to) => ({ from, to })));
const within = (path: string, folder: string) => path.startsWith(`${folder}/`);

describe('the import graph of src/, tools/ and schemas/', () => {
  it("is read with the compiler's module resolution and covers the registry and the composition root", () => {
    expect(graph['tools/index.ts']).toEqual(expect.arrayContaining(['tools/annuity.ts']));
    expect(Object.keys(graph)).toEqual(
      expect.arrayContaining(['src/cli.ts', 'src/runtime/runtime.ts', 'src/http/app.ts', 'src/mcp/server.ts']),
    );
  });

  it('has no import cycles', () => {
    expect((cycles(graph) as string[][]).map((c) => c.join(' → '))).toEqual([]);
  });

  it('finds a cycle when there is one (the check can fail)', () => {
    expect(cycles({ a: ['b'], b: ['c'], c: ['a'], d: ['d'], e: [] })).toEqual([['a', 'b', 'c'], ['d']]);
  });

  it('keeps the transports apart: HTTP, MCP and discovery import none of each other', () => {
    const crossing = edges.filter(
      ({ from, to }) =>
        (within(from, 'src/http') && (within(to, 'src/mcp') || within(to, 'src/discovery'))) ||
        (within(from, 'src/mcp') && (within(to, 'src/http') || within(to, 'src/discovery'))) ||
        (within(from, 'src/discovery') && (within(to, 'src/http') || within(to, 'src/mcp'))),
    );
    expect(crossing).toEqual([]);
  });

  it('keeps tool definitions away from transports and payments (handlers never see either)', () => {
    const reaching = edges.filter(
      ({ from, to }) =>
        within(from, 'tools') &&
        ['src/http', 'src/mcp', 'src/payments', 'src/store', 'src/agent', 'src/discovery'].some((f) => within(to, f)),
    );
    expect(reaching).toEqual([]);
  });

  it('keeps the agent side over the shared layer: the server never imports it, it imports nothing of the server past its ports', () => {
    expect(Object.keys(graph)).toEqual(expect.arrayContaining(['src/agent/caller.ts', 'src/shared/env.ts']));
    expect(layerViolations(graph)).toEqual([]);
    expect(agentReach(graph)).toEqual([]);
    const agentImports = edges.filter(({ from }) => within(from, 'src/agent')).map(({ to }) => to);
    expect(
      agentImports.filter((to) => within(to, 'tools') || to === 'src/tool/tool.ts' || to === 'src/config/config.ts'),
    ).toEqual([]);
  });

  it('finds an import that breaks the layers (the check can fail)', () => {
    const broken = {
      'src/agent/a.ts': ['src/pipeline/invoke.ts', 'src/shared/env.ts', 'src/shared/spends.ts'],
      'src/http/b.ts': ['src/agent/a.ts'],
      'src/cli/c.ts': ['src/agent/a.ts', 'src/runtime/runtime.ts'],
      'src/shared/d.ts': ['src/config/config.ts', 'src/shared/errors.ts'],
    };
    expect(layerViolations(broken)).toEqual([
      { from: 'src/agent/a.ts', to: 'src/pipeline/invoke.ts', rule: expect.stringMatching(/agent side/) },
      { from: 'src/http/b.ts', to: 'src/agent/a.ts', rule: 'the server never imports the agent side' },
      { from: 'src/shared/d.ts', to: 'src/config/config.ts', rule: 'the shared layer imports only itself' },
    ]);
  });

  it('follows imports transitively: a server file the agent side reaches through other files is found, with the shortest chain', () => {
    const graph = {
      'src/agent/a.ts': ['src/agent/b.ts'],
      'src/agent/b.ts': ['src/shared/port.ts'],
      'src/shared/port.ts': ['src/store/open.ts'],
      'src/store/open.ts': ['src/config/config.ts'],
      'src/config/config.ts': [],
    };
    expect(agentReach(graph)).toEqual([
      {
        file: 'src/config/config.ts',
        chain: ['src/agent/b.ts', 'src/shared/port.ts', 'src/store/open.ts', 'src/config/config.ts'],
      },
      {
        file: 'src/store/open.ts',
        chain: ['src/agent/b.ts', 'src/shared/port.ts', 'src/store/open.ts'],
      },
    ]);
  });

  it('fails the import check (exit 1) on a tree whose agent side reaches a server module only transitively', () => {
    const tree = mkdtempSync(join(tmpdir(), 'tollbooth-layers-'));
    const files: Record<string, string> = {
      'src/agent/a.ts': "import { b } from './b.js';\nexport const a = b;\n",
      'src/agent/b.ts': "import { port } from '../shared/port.js';\nexport const b = port;\n",
      'src/shared/port.ts': "export const port = 1;\nexport type { Config } from '../config/config.js';\n",
      'src/config/config.ts': 'export interface Config {\n  port: number;\n}\n',
    };
    try {
      for (const [path, text] of Object.entries(files)) {
        mkdirSync(dirname(join(tree, path)), { recursive: true });
        writeFileSync(join(tree, path), text);
      }
      const run = spawnSync(process.execPath, [SCRIPT, tree], { encoding: 'utf8' });
      expect(run.status).toBe(1);
      expect(run.stderr).toContain(
        'agent reaches server file src/config/config.ts: src/agent/b.ts -> src/shared/port.ts -> src/config/config.ts',
      );
    } finally {
      rmSync(tree, { recursive: true, force: true });
    }
  });

  it("keeps the transports thin: HTTP and MCP import nothing of src/payments/ but the payment answer's types", () => {
    const reaching = edges.filter(
      ({ from, to }) =>
        (within(from, 'src/http') || within(from, 'src/mcp')) &&
        within(to, 'src/payments') &&
        to !== 'src/payments/answer/types.ts',
    );
    expect(reaching).toEqual([]);
    const broken = { 'src/http/e.ts': ['src/payments/answer/types.ts', 'src/payments/mpp/gate.ts'] };
    expect(layerViolations(broken)).toEqual([
      { from: 'src/http/e.ts', to: 'src/payments/mpp/gate.ts', rule: expect.stringMatching(/transport/) },
    ]);
  });
});
