import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const hooks = fileURLToPath(new URL('./module-trace.mjs', import.meta.url));

/** One module resolution: the resolving thread (0 = the main thread), the module's URL and the importing module's. */
export interface TracedModule {
  thread: number;
  url: string;
  parent: string;
}

/** The package (`viem`, `@x402/evm`) a module URL lies in, if it lies in node_modules. */
export function packageOf(url: string): string | undefined {
  return /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url)?.[1];
}

/** What {@link moduleTrace} gives: the environment to spawn with, and what the process resolved so far. */
export interface ModuleTrace {
  env: Record<string, string>;
  /** Every module resolution so far, in order. */
  modules(): TracedModule[];
  /** The packages loaded so far: by every thread, or by the main thread only. */
  packages(where?: 'main'): Set<string>;
}

/** The environment that makes a spawned Node process record every module it resolves, and the packages it loaded so far. */
export function moduleTrace(): ModuleTrace {
  const file = join(mkdtempSync(join(tmpdir(), 'tollbooth-trace-')), 'modules.txt');
  const modules = (): TracedModule[] =>
    readFileSync(file, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const [thread, url, parent] = line.split(' ');
        return { thread: Number(thread), url: url ?? '', parent: parent ?? '' };
      });
  return {
    env: { NODE_OPTIONS: `--import ${hooks}`, TOLLBOOTH_MODULE_TRACE: file },
    modules,
    packages: (where) =>
      new Set(
        modules()
          .filter((m) => where !== 'main' || m.thread === 0)
          .flatMap((m) => packageOf(m.url) ?? []),
      ),
  };
}
