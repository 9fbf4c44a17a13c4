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

/** A charge sentence in any wording ("nothing was charged", "you were not charged", "uncharged", "no charge" …). */
const CHARGE = /\b(un)?charged\b|\bno charge\b/i;

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
});
