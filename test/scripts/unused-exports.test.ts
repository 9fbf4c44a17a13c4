import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain ES module of scripts/, without types
import { ALLOWED, notAllowed, unusedExports } from '../../scripts/unused-exports.mjs';

const base = mkdtempSync(join(tmpdir(), 'tollbooth-exports-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

/** Writes a small repository: `path: text`. */
function repository(files: Record<string, string>): void {
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(base, path)), { recursive: true });
    writeFileSync(join(base, path), text);
  }
}

describe('the exports nothing but tests imports', () => {
  it('tells the used, the test-only, the own-file-only and the dead apart', () => {
    repository({
      'src/a.ts': [
        'export const used = 1;',
        'export function forTests() { return 2; }',
        'export interface Own { n: number }',
        'export const own: Own = { n: 3 };',
        'export type Dead = string;',
        'const local = own.n;',
        'export { local as renamed };',
      ].join('\n'),
      'src/b.ts': "import { used, own } from './a.js';\nexport default used + own.n;",
      'scripts/run.mjs': "import b from '../src/b.js';\nconsole.log(b);",
      'test/a.test.ts': "import { forTests } from '../src/a.js';\nforTests();",
    });
    expect(unusedExports(base)).toEqual({
      dead: ['src/a.ts: Dead', 'src/a.ts: renamed'],
      ownFileOnly: ['src/a.ts: Own'],
      testsOnly: ['src/a.ts: forTests'],
    });
  });

  it('refuses what no rule allows, and allows each kept export under one rule only', () => {
    expect(notAllowed(['src/a.ts: forTests', 'src/http/body.ts: isJsonContentType'])).toEqual(['src/a.ts: forTests']);
    const entries = Object.entries(ALLOWED as Record<string, string[]>).flatMap(([path, names]) =>
      names.map((name) => `${path}: ${name}`),
    );
    expect(new Set(entries).size).toBe(entries.length);
  });
});
