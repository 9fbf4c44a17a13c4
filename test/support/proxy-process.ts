import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'vitest';

/** Whether something accepts TCP connections on 127.0.0.1:port. */
function acceptsConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * Waits until a proxy started as `child` accepts connections on `port` (it binds its listener once its configuration
 * loaded); throws with its log when it exits first or takes over ten seconds.
 */
async function untilListening(child: ChildProcess, port: number, name: string, log: () => string): Promise<void> {
  for (let i = 0; !(await acceptsConnections(port)); i++) {
    if (child.exitCode !== null || i > 400) {
      child.kill('SIGTERM');
      throw new Error(`${name} did not start:\n${log()}`);
    }
    await sleep(25);
  }
}

/** A program some tests run, as `.ci/run` provides it. */
export interface TestProgram {
  /** Its name in sentences ("nginx"). */
  name: string;
  /** Where it is expected (the Debian package's path, or the `env` variable's value). */
  bin: string;
  /** What `.ci/run` sets once it installed the program (`TOLLBOOTH_TEST_<NAME>=required`). */
  requiredEnv: string;
  /** How to get it ("apt-get install nginx, as `.ci/run` does, or set NGINX_BIN"). */
  hint: string;
}

/**
 * `describe` for tests that run `program`. Without it the block is one skipped test whose name says so (or a failing
 * one when `.ci/run` required the program).
 */
export function describeWithProgram(program: TestProgram): (name: string, body: () => void) => void {
  return (name, body) => {
    if (existsSync(program.bin)) return void describe(name, body);
    const note = `${program.name} is not installed at ${program.bin} (${program.hint})`;
    describe(name, () => {
      if (process.env[program.requiredEnv] === 'required') {
        it(`needs ${program.name} (${program.requiredEnv}=required)`, () => {
          throw new Error(note);
        });
      } else {
        it.skip(`SKIPPED — ${note}`, () => undefined);
      }
    });
  };
}

/** A proxy process listening on 127.0.0.1 with its files in a temp dir (removed when it stops). */
export interface RunningProxy {
  url: string;
  /** The configuration it loaded (the shipped file after the test's replacements). */
  config: string;
  /** Its log so far (what it wrote to stderr). */
  errors(): string;
  stop(): Promise<void>;
}

/** How to run one proxy: its program and arguments, its temp dir (its cwd), its port and loaded configuration. */
export interface ProxyRun {
  name: string;
  bin: string;
  args: string[];
  dir: string;
  port: number;
  config: string;
  env?: NodeJS.ProcessEnv;
}

/** Spawns the proxy in its dir, keeps its stderr as its log, and resolves once it listens on its port. */
export async function runProxy(run: ProxyRun): Promise<RunningProxy> {
  const child = spawn(run.bin, run.args, {
    cwd: run.dir,
    env: run.env ?? process.env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => void (stderr += chunk.toString('utf8')));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await untilListening(child, run.port, run.name, () => stderr);
  return {
    url: `http://127.0.0.1:${run.port}`,
    config: run.config,
    errors: () => stderr,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
      rmSync(run.dir, { recursive: true, force: true });
    },
  };
}
