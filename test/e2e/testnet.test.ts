import { rmSync } from 'node:fs';
import { decodePaymentResponseHeader, wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import type { Address } from 'viem';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE_SEPOLIA } from '../../src/shared/networks.js';
import { TESTNET_NETWORKS } from '../../src/shared/network-sets.js';
import { paidTools as tools } from '../../tools/index.js';
import { agentDataDir, runCli } from '../support/agent.js';
import { startLocalChain, type LocalChain } from '../support/chain/node.js';
import {
  BASE_SEPOLIA_USDC,
  balanceOf,
  deployMulticall3IfNeeded,
  deployTestUsdc,
  mint,
} from '../support/chain/token.js';
import { startLookalikeFacilitator, type LookalikeFacilitator } from '../support/facilitator.js';
import { decodeHeader, startTestServer, type TestServer } from '../support/server.js';

/**
 * The testnet set end to end, offline: Tollbooth started with TOLLBOOTH_NETWORK_SET=testnet and only a pay-to address,
 * its EVM facilitator pointed at a look-alike of the public testnet facilitator (FACILITATOR_URL_EVM) that verifies and
 * settles on a local chain with Base Sepolia's chain id and USDC at Base Sepolia's USDC address.
 */
let chain: LocalChain;
let facilitator: LookalikeFacilitator;
let server: TestServer;
let payTo: Address;
let payers: PrivateKeyAccount[];
let settlerKey: `0x${string}`;
const dirs: string[] = [];
const TESTNET_IDS = TESTNET_NETWORKS.map((n) => n.id);
const annuity = { payment: 100, ratePerPeriod: 0.05, periods: 10 };

beforeAll(async () => {
  chain = await startLocalChain({ chainId: 84532 });
  await deployTestUsdc(chain, { name: 'USDC', version: '2', at: BASE_SEPOLIA_USDC });
  await deployMulticall3IfNeeded(chain);
  const [settler, receiver, ...rest] = chain.accounts.slice(1);
  payTo = receiver!.address;
  payers = rest.slice(0, 3).map((a) => privateKeyToAccount(a.privateKey));
  settlerKey = settler!.privateKey;
  for (const payer of payers) await mint(chain, BASE_SEPOLIA_USDC, payer.address, 10_000_000n);
  facilitator = await startLookalikeFacilitator({
    rpcUrl: chain.rpcUrl,
    chainId: 84532,
    privateKey: settler!.privateKey,
    network: BASE_SEPOLIA,
  });
  // Solana is pointed at the look-alike too, so the test never reaches the public facilitator.
  server = await startTestServer({
    TOLLBOOTH_NETWORK_SET: 'testnet',
    PAY_TO_EVM: payTo,
    FACILITATOR_URL_EVM: facilitator.url,
    FACILITATOR_URL_SOLANA: facilitator.url,
  });
}, 120_000);
afterAll(async () => {
  await server?.close();
  await facilitator?.close();
  await chain?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const balance = (who: Address) => balanceOf(chain, BASE_SEPOLIA_USDC, who);

describe('a testnet deployment with one switch (TOLLBOOTH_NETWORK_SET=testnet)', () => {
  it('answers a bare call with a challenge that names only testnets, Base Sepolia USDC first', async () => {
    const res = await fetch(`${server.url}/api/annuity`, { method: 'POST' });
    expect(res.status).toBe(402);
    const challenge = decodeHeader(res.headers.get('PAYMENT-REQUIRED')) as {
      accepts: Array<{ network: string; asset: string; extra: Record<string, unknown> }>;
    };
    expect(challenge.accepts.length).toBeGreaterThan(0);
    for (const option of challenge.accepts) expect(TESTNET_IDS).toContain(option.network);
    expect(challenge.accepts[0]).toMatchObject({
      network: BASE_SEPOLIA,
      asset: BASE_SEPOLIA_USDC,
      extra: { name: 'USDC', version: '2' },
    });
  });

  it('is paid by a stock @x402/fetch client on Base Sepolia, verified and settled by the facilitator FACILITATOR_URL_EVM names', async () => {
    const payer = payers[0]!;
    const client = new x402Client();
    client.register('eip155:*', new ExactEvmScheme(payer));
    const before = {
      payer: await balance(payer.address),
      payTo: await balance(payTo),
      settles: facilitator.calls.settle,
    };
    const res = await wrapFetchWithPayment(fetch, client)(`${server.url}/api/card-validate`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ number: '4111 1111 1111 1111' }),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ valid: true, brand: 'visa', length: 16 });
    expect(decodePaymentResponseHeader(res.headers.get('PAYMENT-RESPONSE')!)).toMatchObject({
      success: true,
      network: BASE_SEPOLIA,
      payer: payer.address,
    });
    expect(await balance(payer.address)).toBe(before.payer - 1000n);
    expect(await balance(payTo)).toBe(before.payTo + 1000n);
    expect(facilitator.calls.settle).toBe(before.settles + 1);
  });

  it('is paid by `tollbooth call` on the testnet set (Base Sepolia, its default budget network), and `tollbooth receipts` lists the payment', async () => {
    const dataDir = agentDataDir();
    dirs.push(dataDir);
    const payer = payers[1]!;
    const key = chain.accounts.find((a) => a.address === payer.address)!.privateKey;
    const before = await balance(payer.address);
    // The agent reads the local chain instead of the public Base Sepolia RPC (only when a payment's fate is open).
    const agentEnv = {
      DATA_DIR: dataDir,
      TOLLBOOTH_NETWORK_SET: 'testnet',
      WALLET_EVM_PRIVATE_KEY: key,
      NETWORKS_JSON: JSON.stringify({ networks: [{ id: BASE_SEPOLIA, rpcUrl: chain.rpcUrl }] }),
    };
    const run = await runCli(['call', 'annuity', '--input', JSON.stringify(annuity), '--remote', server.url], agentEnv);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ type: 'ordinary', presentValue: expect.any(Number) });
    expect(run.stderr).toMatch(/^receipt: .*"network":"eip155:84532"/m);
    expect(await balance(payer.address)).toBe(before - 1000n);

    const receipts = await runCli(['receipts', '--json'], {
      DATA_DIR: server.dataDir,
      TOLLBOOTH_NETWORK_SET: 'testnet',
      PAY_TO_EVM: payTo,
      LOG_LEVEL: 'silent',
    });
    expect(receipts.code, receipts.stderr).toBe(0);
    const report = JSON.parse(receipts.stdout) as {
      payments: Array<Record<string, unknown>>;
      totals: { byNetwork: Array<Record<string, unknown>> };
    };
    expect(report.payments).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          status: 'settled',
          tool: 'annuity',
          network: BASE_SEPOLIA,
          payer: payer.address,
          amount: '1000',
        }),
      ]),
    );
    expect(report.totals.byNetwork).toEqual([
      expect.objectContaining({
        network: BASE_SEPOLIA,
        label: 'Base Sepolia',
        settled: expect.objectContaining({ count: 2, units: '0.002' }),
      }),
    ]);
  });
});

describe('a replaced table holding Base Sepolia only (NETWORKS_JSON with replace: true), on the default set', () => {
  it("starts, and every tool's bare call is answered with a challenge naming Base Sepolia alone", async () => {
    const only = TESTNET_NETWORKS.find((n) => n.id === BASE_SEPOLIA)!;
    const replaced = await startTestServer({ NETWORKS_JSON: JSON.stringify({ replace: true, networks: [only] }) });
    try {
      for (const tool of tools) {
        const res = await fetch(`${replaced.url}${tool.path}`, { method: tool.method });
        expect(res.status, tool.name).toBe(402);
        const header = res.headers.get('PAYMENT-REQUIRED');
        const challenge = (header ? decodeHeader(header) : await res.json()) as { accepts: Array<{ network: string }> };
        const networks = new Set(
          challenge.accepts.map((a) => (a.network === 'base-sepolia' ? BASE_SEPOLIA : a.network)),
        );
        expect(networks, tool.name).toEqual(new Set([BASE_SEPOLIA]));
      }
    } finally {
      await replaced.close();
    }
  });
});

describe('transfers-evm on the testnet set (x402 version 1, network base-sepolia)', () => {
  it('is paid on base-sepolia with X-PAYMENT, settled in-process, and lists the transfers of Base Sepolia', async () => {
    const rpc = JSON.stringify({ networks: [{ id: BASE_SEPOLIA, rpcUrl: chain.rpcUrl }] });
    const inProcess = await startTestServer({
      TOLLBOOTH_NETWORK_SET: 'testnet',
      PAY_TO_EVM: payTo,
      FACILITATOR_EVM_PRIVATE_KEY: settlerKey,
      NETWORKS_JSON: rpc,
    });
    try {
      const dataDir = agentDataDir();
      dirs.push(dataDir);
      const payer = payers[2]!;
      const key = chain.accounts.find((a) => a.address === payer.address)!.privateKey;
      const before = await balance(payer.address);
      const run = await runCli(
        [
          'call',
          'transfers-evm',
          '--input',
          JSON.stringify({ address: payer.address, limit: 5 }),
          '--remote-transfers',
          inProcess.url,
        ],
        {
          DATA_DIR: dataDir,
          TOLLBOOTH_NETWORK_SET: 'testnet',
          WALLET_EVM_PRIVATE_KEY: key,
          NETWORKS_JSON: rpc,
        },
      );
      expect(run.code, run.stderr).toBe(0);
      const body = JSON.parse(run.stdout) as { transfers: Array<Record<string, unknown>> };
      // The mint that funded the payer on the local "Base Sepolia" chain: read from Base Sepolia's RPC, not Base's.
      expect(
        body.transfers.some((t) => t.to === payer.address && t.from === '0x0000000000000000000000000000000000000000'),
      ).toBe(true);
      expect(run.stderr).toMatch(/^receipt: .*"network":"base-sepolia"/m);
      expect(await balance(payer.address)).toBe(before - 1000n);
    } finally {
      await inProcess.close();
    }
  });
});
