import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { toHex } from 'viem';
import { mnemonicToAccount } from 'viem/accounts';

/** Hardhat's well-known default mnemonic; its accounts are pre-funded with 10,000 ETH each. */
export const HARDHAT_MNEMONIC = 'test test test test test test test test test test test junk';

/** A funded account on the local chain. */
export interface ChainAccount {
  privateKey: `0x${string}`;
  address: `0x${string}`;
}

/** A running local EVM JSON-RPC node. */
export interface LocalChain {
  rpcUrl: string;
  chainId: number;
  accounts: ChainAccount[];
  /** The node's process id (e.g. to read its CPU time). */
  pid: number;
  stop(): Promise<void>;
}

/** Options for {@link startLocalChain}. */
export interface StartLocalChainOptions {
  chainId: number;
  /** How many of the default accounts to derive (hardhat funds 20); defaults to 10. */
  accountCount?: number;
  /** Milliseconds to wait for the node to answer `eth_chainId`; defaults to 30,000. */
  timeoutMs?: number;
  /**
   * Lets blocks mined in the same second share its timestamp (hardhat's `allowBlocksWithSameTimestamp`), so under
   * load the chain's clock follows the wall clock instead of running one second ahead per block; off by default.
   */
  sameTimestampBlocks?: boolean;
}

const PROJECT_ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const HARDHAT_BIN = join(PROJECT_ROOT, 'node_modules/hardhat/internal/cli/bootstrap.js');
const derivedAccounts: ChainAccount[] = [];

/** Starts `hardhat node` on 127.0.0.1 at a free port with the given chain id, once it answers. */
export async function startLocalChain(options: StartLocalChainOptions): Promise<LocalChain> {
  const { chainId, accountCount = 10, timeoutMs = 30_000 } = options;
  if (accountCount > 20) throw new Error('hardhat only funds 20 default accounts');
  const dir = mkdtempSync(join(tmpdir(), 'tollbooth-chain-'));
  const configFile = join(dir, 'hardhat.config.cjs');
  const config = {
    solidity: '0.8.28',
    networks: {
      hardhat: {
        chainId,
        accounts: { mnemonic: HARDHAT_MNEMONIC, count: 20 },
        ...(options.sameTimestampBlocks ? { allowBlocksWithSameTimestamp: true } : {}),
      },
    },
  };
  writeFileSync(configFile, `module.exports = ${JSON.stringify(config, null, 2)};\n`);

  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const child = spawnHardhat(configFile, port);
    // Derive keys while the node boots in its own process.
    const accounts = defaultAccounts(accountCount);
    const rpcUrl = `http://127.0.0.1:${port}`;
    try {
      await waitForChainId(rpcUrl, chainId, child, timeoutMs);
    } catch (error) {
      lastError = error;
      await killChild(child);
      continue;
    }
    const onExit = (): void => {
      child.kill('SIGKILL');
    };
    process.once('exit', onExit);
    let stopped = false;
    return {
      rpcUrl,
      chainId,
      accounts,
      pid: child.pid ?? 0,
      async stop() {
        if (stopped) return;
        stopped = true;
        process.removeListener('exit', onExit);
        await killChild(child);
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  rmSync(dir, { recursive: true, force: true });
  throw new Error(`could not start hardhat node: ${String(lastError)}`);
}

/** Derives the first `count` hardhat default accounts (memoised; each derivation costs ~40 ms). */
export function defaultAccounts(count = 10): ChainAccount[] {
  for (let i = derivedAccounts.length; i < count; i++) {
    const account = mnemonicToAccount(HARDHAT_MNEMONIC, { addressIndex: i });
    const key = account.getHdKey().privateKey;
    if (!key) throw new Error(`no private key for account ${i}`);
    derivedAccounts.push({ privateKey: toHex(key), address: account.address });
  }
  return derivedAccounts.slice(0, count);
}

type HardhatProcess = ChildProcess & { output: () => string };

function spawnHardhat(configFile: string, port: number): HardhatProcess {
  const args = ['--config', configFile, 'node', '--hostname', '127.0.0.1', '--port', String(port)];
  const child = spawn(process.execPath, [HARDHAT_BIN, ...args], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, HARDHAT_DISABLE_TELEMETRY_PROMPT: 'true', FORCE_COLOR: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // Keep only a tail of the output for error messages; hardhat logs every RPC call.
  let tail = '';
  const keep = (chunk: Buffer): void => {
    tail = (tail + chunk.toString()).slice(-4000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return Object.assign(child, { output: () => tail });
}

async function waitForChainId(
  rpcUrl: string,
  chainId: number,
  child: HardhatProcess,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      const status = child.exitCode ?? child.signalCode;
      throw new Error(`hardhat node exited early (${status}):\n${child.output()}`);
    }
    try {
      const response = await fetch(rpcUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
      });
      const body = (await response.json()) as { result?: string };
      if (body.result !== undefined) {
        if (Number(body.result) !== chainId) {
          throw new Error(`node reports chain ${body.result}, wanted ${chainId}`);
        }
        return;
      }
    } catch (error) {
      if (error instanceof Error && error.message.startsWith('node reports')) throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`hardhat node did not answer within ${timeoutMs} ms:\n${child.output()}`);
}

async function killChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
  await exited;
  clearTimeout(timer);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => (port ? resolve(port) : reject(new Error('no free port'))));
    });
  });
}
