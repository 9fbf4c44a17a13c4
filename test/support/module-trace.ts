import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const hooks = fileURLToPath(new URL('./module-trace.mjs', import.meta.url));

/** The environment that makes a spawned Node process record every module it resolves, and the packages it loaded so far. */
export function moduleTrace(): { env: Record<string, string>; packages(): Set<string> } {
  const file = join(mkdtempSync(join(tmpdir(), 'tollbooth-trace-')), 'modules.txt');
  return {
    env: { NODE_OPTIONS: `--import ${hooks}`, TOLLBOOTH_MODULE_TRACE: file },
    packages: () =>
      new Set(
        readFileSync(file, 'utf8')
          .split('\n')
          .flatMap((url) => {
            const match = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
            return match ? [match[1]!] : [];
          }),
      ),
  };
}
