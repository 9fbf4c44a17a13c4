import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** Every TypeScript file under a folder of the repository, recursively. */
function sources(folder: string): string[] {
  return readdirSync(join(root, folder), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.ts'))
    .map((name) => join(folder, name));
}

/**
 * The charge sentence of an answer, in any wording it had ("nothing was charged", "you were not charged", "you have
 * not been charged", "so it is not charged"). A tool's description may still state its pricing policy for agents
 * ("an unknown ticker is answered 404 and not charged"): that text is part of the challenge the seed fixes.
 */
const CHARGE = /\b(nothing was|you were not|you have not been|it is not) charged\b/i;

/** The lines of `files` that speak of a charge, as "path:line: text". */
function chargeLines(files: string[]): string[] {
  return files.flatMap((file) =>
    readFileSync(join(root, file), 'utf8')
      .split('\n')
      .flatMap((line, i) =>
        CHARGE.test(line) ? [`${relative(root, join(root, file))}:${i + 1}: ${line.trim()}`] : [],
      ),
  );
}

/**
 * Where a charge sentence may stand outside src/pipeline/charge-note.ts, and why:
 * - the OpenAPI document's response descriptions describe every answer of a status; they answer no call;
 * - the agent side is the buyer: it reports its own payments and cannot import the server's pipeline.
 */
const MAY_SAY = ['src/discovery/openapi-components.ts', 'src/agent/'];

describe('who says whether a call was charged', () => {
  it('is never a handler, a provider, a worker or a shared helper: they say only what went wrong', () => {
    const folders = ['tools', 'src/providers', 'src/workers', 'src/smm', 'src/shared'];
    expect(chargeLines(folders.flatMap(sources))).toEqual([]);
  });

  it('is the paid pipeline, whose charge sentence is written in src/pipeline/charge-note.ts alone', () => {
    const pipeline = sources('src/pipeline');
    const writers = pipeline.filter((file) => /Nothing was charged\./.test(readFileSync(join(root, file), 'utf8')));
    expect(writers).toEqual(['src/pipeline/charge-note.ts']);
  });

  it('is nowhere else: transports, limits, shutdown and the payment layer leave it to charge-note.ts', () => {
    const files = [...sources('src'), ...sources('tools')].filter(
      (file) => file !== 'src/pipeline/charge-note.ts' && !MAY_SAY.some((allowed) => file.startsWith(allowed)),
    );
    expect(chargeLines(files)).toEqual([]);
  });
});
