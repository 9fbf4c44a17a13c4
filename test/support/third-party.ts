import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'vitest';
import { agentDataDir } from './agent.js';
import { freePort } from './nginx.js';
import { LOCAL_NETWORK, type PaidEnvironment } from './paid.js';

/**
 * The side project of sellers nobody here wrote (test/third-party/: its own package.json and lock, installed with
 * `npm ci --prefix test/third-party`, never part of the main tree). Its packages are loaded only by its own scripts,
 * in child processes.
 */
export const THIRD_PARTY_DIR = fileURLToPath(new URL('../third-party/', import.meta.url));

/** The command that installs the side project (what a skipped test tells the reader to run). */
const THIRD_PARTY_INSTALL = 'npm ci --prefix test/third-party';

/** Set by `.ci/run` once it installed the side project: then a missing package fails its tests instead of skipping. */
const required = process.env.TOLLBOOTH_TEST_THIRD_PARTY === 'required';

/**
 * `describe` for tests of sellers built with the side project's `packages`. Without them the block is one skipped
 * test whose name says how to install them (a failing one when `.ci/run` required them), and a warning is printed.
 */
export function describeWithThirdParty(packages: readonly string[], name: string, body: () => void): void {
  const missing = packages.filter((pkg) => !existsSync(join(THIRD_PARTY_DIR, 'node_modules', pkg, 'package.json')));
  if (missing.length === 0) return void describe(name, body);
  const note = `${missing.join(' and ')} not installed in test/third-party/node_modules: run \`${THIRD_PARTY_INSTALL}\``;
  console.warn(`SKIPPED "${name}": ${note}`);
  describe(name, () => {
    if (!required) return void it.skip(`SKIPPED — ${note}`, () => undefined);
    it('needs the side project (TOLLBOOTH_TEST_THIRD_PARTY=required)', () => {
      throw new Error(note);
    });
  });
}

/** A third-party seller running in its own process. */
export interface ThirdPartySeller {
  url: string;
  /** How often the seller's paid route ran, as the seller reports it (`GET /runs`, free). */
  runs(): Promise<number>;
  /** What the process wrote to stderr so far. */
  stderr(): string;
  close(): Promise<void>;
}

/** Runs `script` of test/third-party/ with `env` and PORT (a free port of 127.0.0.1), once it prints `listening`. */
export async function startThirdPartySeller(script: string, env: Record<string, string>): Promise<ThirdPartySeller> {
  const port = await freePort();
  const child = spawn(process.execPath, [join(THIRD_PARTY_DIR, script)], {
    cwd: THIRD_PARTY_DIR,
    env: { PATH: process.env.PATH ?? '', ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // A test process that ends without closing the seller does not leave it running.
  const onExit = (): void => void child.kill('SIGKILL');
  process.once('exit', onExit);
  void exited.then(() => process.off('exit', onExit));
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      if (stdout.includes('listening\n')) resolve();
    });
    void exited.then(() => reject(new Error(`${script} exited (${child.exitCode}) before listening:\n${stderr}`)));
  });
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    runs: async () => ((await (await fetch(`${url}/runs`)).json()) as { runs: number }).runs,
    stderr: () => stderr,
    close: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await exited;
      }
    },
  };
}

/** The agent environment of payer `i` of `paid`: its own ledger in a fresh directory (added to `dirs`), $1 a day. */
export function thirdPartyPayerEnv(paid: PaidEnvironment, i: number, dirs: string[]): Record<string, string> {
  const dir = agentDataDir();
  dirs.push(dir);
  return {
    DATA_DIR: dir,
    NETWORKS_JSON: paid.env.NETWORKS_JSON!,
    WALLET_EVM_PRIVATE_KEY: paid.chain.accounts.find((a) => a.address === paid.payers[i]!.address)!.privateKey,
    BUDGET_NETWORKS: LOCAL_NETWORK,
    BUDGET_MAX_USD_PER_DAY: '1',
    LOG_LEVEL: 'warn',
  };
}
