/** Where a worker thread's entry module is, in the bundled CLI, in the tsc build and in the TypeScript sources. */
import { Worker, type WorkerOptions } from 'node:worker_threads';

/** The worker entry module and the Node options its threads start with. */
export interface WorkerEntry {
  filename: string;
  execArgv: string[];
}

/**
 * The thread entry `name` beside the module whose `import.meta.url` is `here`: `dist/bin/<name>.js` in the bundled
 * CLI (scripts/bundle.mjs builds every thread entry there, beside the chunks), `<name>.js` beside it in `dist/src/`;
 * from TypeScript sources (tests, `tsx`) `<name>.ts`, its threads loading tsx.
 */
export function entryBeside(here: string, name: string): WorkerEntry {
  if (here.endsWith('.ts')) return { filename: new URL(`./${name}.ts`, here).href, execArgv: ['--import', 'tsx'] };
  return { filename: new URL(`./${name}.js`, here).href, execArgv: [] };
}

/**
 * Starts one bare worker thread (not a piscina pool) on `entry`. A TypeScript entry (tests) is imported by a small
 * bootstrap that registers tsx in the thread first: Node 20 does not apply an `--import` of `execArgv` to a worker.
 */
export function startThread(entry: WorkerEntry, options: Omit<WorkerOptions, 'eval' | 'execArgv'> = {}): Worker {
  if (!entry.filename.endsWith('.ts'))
    return new Worker(new URL(entry.filename), { ...options, execArgv: entry.execArgv });
  const load = `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(entry.filename)}); });`;
  return new Worker(load, { ...options, eval: true });
}
