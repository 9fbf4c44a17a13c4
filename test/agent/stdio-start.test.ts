import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generatePrivateKey } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { spawnAgent, type AgentProcess } from '../support/agent.js';
import { CLI_PATH } from '../support/mcp.js';
import { moduleTrace } from '../support/module-trace.js';
import { startTestServer, type TestServer } from '../support/server.js';

/** The chain SDKs of the four payable families, none of which an agent needs before it holds a key of that family. */
const CHAIN_SDKS = ['viem', '@x402/evm', '@solana/kit', '@x402/svm', 'algosdk', '@x402/avm', '@stellar/stellar-sdk'];
const NOT_EVM = CHAIN_SDKS.filter((sdk) => sdk !== 'viem' && sdk !== '@x402/evm');

let server: TestServer;
const agents: AgentProcess[] = [];
const dirs: string[] = [];

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await Promise.all(agents.map((agent) => agent.close().catch(() => undefined)));
  await server?.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** Starts remote mode on the test server with the module trace on; resolves once it answered initialize and tools/list. */
async function startedAgent(env: Record<string, string>) {
  const trace = moduleTrace();
  const dataDir = mkdtempSync(join(tmpdir(), 'tollbooth-agent-start-'));
  dirs.push(dataDir);
  const agent = await spawnAgent(['--remote', server.url], { ...trace.env, AGENT_DATA_DIR: dataDir, ...env });
  agents.push(agent);
  const { tools } = await agent.client.listTools();
  expect(tools.map((t) => t.name)).toContain('annuity');
  return { agent, trace, loaded: trace.packages() };
}

describe('tollbooth stdio --remote at start-up (an MCP host starts it per conversation)', () => {
  it('lists the remote tools without a wallet and without loading any chain SDK', async () => {
    const { loaded } = await startedAgent({});
    expect(CHAIN_SDKS.filter((sdk) => loaded.has(sdk))).toEqual([]);
  });

  it('with an EVM key loads the EVM SDK only, its signing schemes once it answered, never Solana, Algorand or Stellar', async () => {
    const { trace, loaded } = await startedAgent({ WALLET_EVM_PRIVATE_KEY: generatePrivateKey() });
    expect(loaded.has('viem')).toBe(true);
    expect(NOT_EVM.filter((sdk) => loaded.has(sdk))).toEqual([]);
    // The schemes load by themselves after the start, before any call asks for them.
    await vi.waitFor(() => expect(trace.packages().has('@x402/evm')).toBe(true), { timeout: 20_000, interval: 100 });
    expect(NOT_EVM.filter((sdk) => trace.packages().has(sdk))).toEqual([]);
  });
});

/** Remote mode's process given one initialize line: its stderr and exit code once it ended. */
function runUntilExit(env: Record<string, string>): Promise<{ stderr: string; code: number | null }> {
  const child = spawn(process.execPath, [CLI_PATH, 'stdio', '--remote', server.url], {
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', ...env },
  });
  let stderr = '';
  child.stdout.resume();
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const initialize = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '1' } },
  };
  // stdin stays open: the process must end on its own, from the agent's failure (never half-started, waiting).
  child.stdin.write(`${JSON.stringify(initialize)}\n`);
  return new Promise((resolve) => child.on('exit', (code) => resolve({ stderr, code })));
}

describe('tollbooth stdio --remote when its agent cannot start', () => {
  it('exits 1 naming the store it could not open, whatever the client sent', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tollbooth-agent-start-'));
    dirs.push(dataDir);
    const ended = await runUntilExit({ AGENT_DATA_DIR: dataDir, DATABASE_URL: 'postgres://127.0.0.1:1/nowhere' });
    expect(ended.code).toBe(1);
    expect(ended.stderr).toContain('Could not open the PostgreSQL store at postgres://127.0.0.1:1/nowhere');
  });
});
