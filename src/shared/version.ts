import { readFileSync } from 'node:fs';

function findVersion(): string {
  for (const rel of ['../../package.json', '../../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(rel, import.meta.url), 'utf8')) as {
        name?: string;
        version?: string;
      };
      if (pkg.name === 'tollbooth' && pkg.version) return pkg.version;
    } catch {
      // try the next location (src/shared/, dist/bin/ or dist/src/shared/)
    }
  }
  return '0.0.0';
}

/** The package version, read once from package.json (works from source and from dist/). */
export const VERSION = findVersion();
