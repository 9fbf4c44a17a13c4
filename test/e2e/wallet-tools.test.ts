import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { createKeyPairSignerFromBytes, generateKeyPairSigner, type Address as SolAddress } from '@solana/kit';
import { x402Client } from '@x402/core/client';
import type { PaymentRequired, PaymentRequirements } from '@x402/core/types';
import type { PaymentRequiredV1 } from '@x402/core/types/v1';
import { ExactEvmSchemeV1 } from '@x402/evm/exact/v1/client';
import { decodePaymentResponseHeader, wrapFetchWithPayment } from '@x402/fetch';
import { createPublicClient, createWalletClient, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BASE_MAINNET } from '../../src/shared/networks.js';
import { SOLANA_DEVNET } from '../../src/providers/chain/settings.js';
import { startBaseEnvironment, type BaseEnvironment } from '../support/chain/permit2-env.js';
import { newSolanaKeypairBytes } from '../support/chain/solana-env.js';
import { LAMPORTS_PER_SOL, SolanaLedger } from '../support/chain/solana-ledger.js';
import { startSolanaRpc, type SolanaRpc } from '../support/chain/solana.js';
import { localTransport, localViemChain, mint, testUsdcAbi } from '../support/chain/token.js';
import { connectHttpClient } from '../support/mcp.js';
import { LOCAL_NETWORK, startPaidEnvironment, type PaidEnvironment } from '../support/paid.js';
import { encodePayment, signExactPayment } from '../support/payer.js';
import { decodeHeader, startTestServer, type TestServer } from '../support/server.js';
import { cdpTestKey, startCdpLookalike, type CdpLookalike } from '../support/upstreams/cdp-faucet.js';
import { rpcMethod, startEvmRpcProxy, type EvmRpcProxy } from '../support/upstreams/evm-rpc.js';
import { startSolanaWalletRpc, type SolanaWalletRpc } from '../support/upstreams/solana-rpc.js';

const PRICE = { fund: 1_000n, readiness: 50_000n, transfers: 1_000n };

let paid: PaidEnvironment;
let base: BaseEnvironment;
let proxy: EvmRpcProxy;
let ledger: SolanaLedger;
let solanaInner: SolanaRpc;
let solana: SolanaWalletRpc;
let usdcMint: SolAddress;
let cdp: CdpLookalike;
let server: TestServer;
let hosted: TestServer;
let mcp: Client;
let faucetAddress: Address;

beforeAll(async () => {
  [paid, base] = await Promise.all([startPaidEnvironment(4), startBaseEnvironment(3)]);
  const faucetKey = paid.chain.accounts[8]!.privateKey;
  faucetAddress = privateKeyToAccount(faucetKey).address;
  await mint(paid.chain, paid.token, faucetAddress, 100_000_000n);
  proxy = await startEvmRpcProxy(paid.chain.rpcUrl);
  ledger = await SolanaLedger.create();
  usdcMint = await ledger.createMint(6);
  const solanaFaucet = newSolanaKeypairBytes();
  const solanaFaucetAddress = (await createKeyPairSignerFromBytes(solanaFaucet)).address;
  ledger.airdrop(solanaFaucetAddress, 10n * LAMPORTS_PER_SOL);
  await ledger.fund(solanaFaucetAddress, usdcMint, 100_000_000n);
  solanaInner = await startSolanaRpc(ledger);
  solana = await startSolanaWalletRpc(ledger, solanaInner.url);
  const key = cdpTestKey('ec');
  cdp = await startCdpLookalike(key);
  const networks = [
    {
      id: LOCAL_NETWORK,
      family: 'evm',
      asset: paid.token,
      decimals: 6,
      name: 'USDC',
      version: '2',
      rpcUrl: proxy.url,
      label: 'Base Sepolia (local chain)',
    },
    { id: BASE_MAINNET, rpcUrl: base.chain.rpcUrl, label: 'Base (local chain 8453)' },
    {
      id: SOLANA_DEVNET,
      family: 'svm',
      asset: usdcMint,
      decimals: 6,
      rpcUrl: solana.url,
      label: 'Solana devnet (local ledger)',
    },
  ];
  const env = {
    ...paid.env,
    NETWORKS_JSON: JSON.stringify({ networks }),
    FAUCET_PROVIDER: 'self-hosted',
    FAUCET_EVM_PRIVATE_KEY: faucetKey,
    FAUCET_SOLANA_SECRET_KEY: JSON.stringify([...solanaFaucet]),
    FAUCET_SOLANA_USDC_MINT: usdcMint,
    CDP_API_URL: cdp.url,
    CDP_API_KEY_ID: key.keyId,
    CDP_API_KEY_SECRET: key.secret,
    WALLET_READINESS_NETWORKS: `${LOCAL_NETWORK},${SOLANA_DEVNET}`,
    TRANSFERS_CHUNK_BLOCKS: '5',
    UPSTREAM_RETRIES: '0',
  };
  server = await startTestServer(env);
  hosted = await startTestServer({ ...env, FAUCET_PROVIDER: 'cdp' });
  mcp = await connectHttpClient(server.url);
}, 180_000);
afterAll(async () => {
  await mcp?.close();
  await hosted?.close();
  await server?.close();
  await cdp?.stop();
  await solana?.stop();
  await solanaInner?.close();
  await proxy?.stop();
  await Promise.all([paid?.stop(), base?.stop()]);
});

const entries = new Map<string, PaymentRequirements>();
async function entry(url: string): Promise<PaymentRequirements> {
  const known = entries.get(url);
  if (known) return known;
  const challenge = decodeHeader(
    (await fetch(url, { method: 'POST' })).headers.get('payment-required'),
  ) as PaymentRequired;
  const found = challenge.accepts.find((a) => a.network === LOCAL_NETWORK)!;
  entries.set(url, found);
  return found;
}

interface Outcome {
  ok: boolean;
  status?: number;
  body: Record<string, unknown>;
  receipt?: { success: boolean; transaction: string };
}

async function overHttp(
  payer: PrivateKeyAccount,
  path: string,
  input: Record<string, unknown>,
  on: TestServer = server,
): Promise<Outcome> {
  const payment = await signExactPayment(payer, await entry(on.url + path));
  const res = await fetch(on.url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'payment-signature': encodePayment(payment) },
    body: JSON.stringify(input),
  });
  const header = res.headers.get('payment-response');
  return {
    ok: res.ok,
    status: res.status,
    body: (await res.json()) as Record<string, unknown>,
    ...(header ? { receipt: decodeHeader(header) as Outcome['receipt'] } : {}),
  };
}

async function overMcp(
  payer: PrivateKeyAccount,
  tool: string,
  path: string,
  input: Record<string, unknown>,
  progress?: (p: { progress: number; total?: number }) => void,
): Promise<Outcome> {
  const payment = await signExactPayment(payer, await entry(server.url + path));
  const result = await mcp.callTool(
    { name: tool, arguments: input, _meta: { 'x402/payment': payment } },
    undefined,
    progress ? { onprogress: progress } : {},
  );
  const text = (result.content as Array<{ text: string }>)[0]!.text;
  const receipt = result._meta?.['x402/payment-response'] as Outcome['receipt'];
  return {
    ok: !result.isError,
    body:
      (result.structuredContent as Record<string, unknown> | undefined) ??
      (JSON.parse(text) as Record<string, unknown>),
    ...(receipt ? { receipt } : {}),
  };
}

const fresh = (): Address => privateKeyToAccount(generatePrivateKey()).address;
const codeOf = (o: Outcome) => (o.body.error as { code: string }).code;
const ethOf = (who: Address) =>
  createPublicClient({ transport: localTransport(paid.chain) }).getBalance({ address: who });

describe('testnet-fund, paid and settled on the local chain', () => {
  it('drips 1 USDC over HTTP from the self-hosted faucet: the recipient gains it and the payer pays the price', async () => {
    const payer = paid.payers[0]!;
    const to = fresh();
    const before = { payer: await paid.balance(payer.address), faucet: await paid.balance(faucetAddress) };
    const out = await overHttp(payer, '/api/testnet-fund', { address: to.toLowerCase() });
    expect(out.status).toBe(200);
    expect(out.body).toMatchObject({
      funded: true,
      network: 'base-sepolia',
      token: 'usdc',
      transactionHash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
    });
    expect(out.body.explorer).toBe(`https://sepolia.basescan.org/tx/${String(out.body.transactionHash)}`);
    expect(out.receipt?.success).toBe(true);
    expect(await paid.balance(to)).toBe(1_000_000n);
    expect(await paid.balance(faucetAddress)).toBe(before.faucet - 1_000_000n);
    expect(await paid.balance(payer.address)).toBe(before.payer - PRICE.fund);
  });

  it('drips 0.0001 ETH over MCP', async () => {
    const payer = paid.payers[0]!;
    const to = fresh();
    const before = await paid.balance(payer.address);
    const out = await overMcp(payer, 'testnet-fund', '/api/testnet-fund', { address: to, token: 'eth' });
    expect(out.ok).toBe(true);
    expect(out.receipt?.success).toBe(true);
    expect(await ethOf(to)).toBe(100_000_000_000_000n);
    expect(await paid.balance(payer.address)).toBe(before - PRICE.fund);
  });

  it('drips USDC on Solana devnet to a base58 address from the self-hosted Solana faucet', async () => {
    const to = (await generateKeyPairSigner()).address;
    const out = await overHttp(paid.payers[0]!, '/api/testnet-fund', { address: to, network: 'solana-devnet' });
    expect(out.status).toBe(200);
    expect(out.body).toMatchObject({ funded: true, network: 'solana-devnet', token: 'usdc' });
    expect(await ledger.tokenBalance(to, usdcMint)).toBe(1_000_000n);
  });

  it('gives 10 concurrent paid requests for one address exactly 2 drips; the other 8 are refused with 429 and not charged', async () => {
    const payer = paid.payers[1]!;
    const to = fresh();
    const path = '/api/testnet-fund';
    const payments = await Promise.all(
      Array.from({ length: 10 }, async () =>
        encodePayment(await signExactPayment(payer, await entry(server.url + path))),
      ),
    );
    const before = { payer: await paid.balance(payer.address), faucet: await paid.balance(faucetAddress) };
    const answers = await Promise.all(
      payments.map((p) =>
        fetch(server.url + path, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'payment-signature': p },
          body: JSON.stringify({ address: to }),
        }),
      ),
    );
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 200, 429, 429, 429, 429, 429, 429, 429, 429]);
    for (const refused of answers.filter((r) => r.status === 429)) {
      expect(refused.headers.get('payment-response')).toBeNull();
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('rate_limited');
    }
    expect(await paid.balance(to)).toBe(2_000_000n);
    expect(await paid.balance(faucetAddress)).toBe(before.faucet - 2_000_000n);
    expect(await paid.balance(payer.address)).toBe(before.payer - 2n * PRICE.fund);
  });

  it('answers an address that does not match the network with 400 naming the field, before any payment', async () => {
    const solanaAddress = 'HpabPRRCFbBKSuJr5PdkVvQc85FyxyTWkFM2obBRSvHT';
    const unpaid = await fetch(server.url + '/api/testnet-fund', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ address: solanaAddress }),
    });
    expect(unpaid.status).toBe(400);
    expect(((await unpaid.json()) as { error: { field: string } }).error.field).toBe('address');
    const before = await paid.balance(paid.payers[0]!.address);
    const out = await overHttp(paid.payers[0]!, '/api/testnet-fund', { address: fresh(), network: 'solana-devnet' });
    expect(out.status).toBe(400);
    expect(await paid.balance(paid.payers[0]!.address)).toBe(before);
  });

  it('drips from the hosted CDP faucet when configured, and a provider cap (429) is refused and not charged', async () => {
    const payer = paid.payers[2]!;
    const before = await paid.balance(payer.address);
    const to = fresh();
    const out = await overHttp(payer, '/api/testnet-fund', { address: to }, hosted);
    expect(out.status).toBe(200);
    expect(out.body.transactionHash).toBe(cdp.drips.at(-1)!.transaction);
    cdp.failNext('429');
    const capped = await overHttp(payer, '/api/testnet-fund', { address: fresh() }, hosted);
    expect(capped.status).toBe(429);
    expect(codeOf(capped)).toBe('rate_limited');
    expect(capped.receipt).toBeUndefined();
    expect(await paid.balance(payer.address)).toBe(before - PRICE.fund);
  });
});

describe('wallet-readiness, paid and settled on the local chain', () => {
  const path = '/api/skill/wallet-readiness';
  const steps = (o: Outcome) => o.body.steps as Array<{ ok: boolean; slug: string; result: Record<string, unknown> }>;

  it('reports real balances, gas and an onramp link over HTTP and charges the price', async () => {
    const payer = paid.payers[3]!;
    const wallet = fresh();
    await mint(paid.chain, paid.token, wallet, 4_200_000n);
    const before = await paid.balance(payer.address);
    const out = await overHttp(payer, path, { address: wallet });
    expect(out.status).toBe(200);
    expect(out.body.summary).toBe('3/3 steps succeeded');
    const balances = steps(out).find((s) => s.slug === 'wallet-balances')!.result;
    expect(balances).toMatchObject({
      networks: [
        { network: LOCAL_NETWORK, ok: true, native: { raw: '0' }, stablecoin: { raw: '4200000', formatted: '4.2' } },
      ],
      stablecoinTotalUsd: '4.2',
    });
    expect(steps(out).find((s) => s.slug === 'onramp-link')!.result.url).toBe(cdp.sessions.at(-1)!.url);
    expect(out.receipt?.success).toBe(true);
    expect(await paid.balance(payer.address)).toBe(before - PRICE.readiness);
  });

  it('adds Solana balances over MCP and reports progress for each step', async () => {
    const payer = paid.payers[3]!;
    const solanaAddress = (await generateKeyPairSigner()).address;
    await ledger.fund(solanaAddress, usdcMint, 2_500_000n);
    const events: Array<{ progress: number; total?: number }> = [];
    const out = await overMcp(payer, 'wallet-readiness', path, { address: fresh(), solanaAddress }, (p) =>
      events.push(p),
    );
    expect(out.ok).toBe(true);
    expect(out.body.summary).toBe('3/3 steps succeeded');
    const networks = steps(out).find((s) => s.slug === 'wallet-balances')!.result.networks as Array<
      Record<string, unknown>
    >;
    expect(networks.find((n) => n.network === SOLANA_DEVNET)).toMatchObject({
      ok: true,
      address: solanaAddress,
      stablecoin: { raw: '2500000' },
    });
    expect(events.map((e) => e.progress)).toEqual(expect.arrayContaining([1, 2, 3]));
    expect(events.every((e) => e.total === 3)).toBe(true);
  });

  const failures: Array<[string, () => void]> = [
    ['wallet-balances', () => proxy.failNext('error200', 1, rpcMethod('eth_getBalance'))],
    ['gas-snapshot', () => proxy.failNext('error200', 1, rpcMethod('eth_gasPrice'))],
    ['onramp-link', () => cdp.failNext('500')],
  ];
  it.each(failures)('answers 2/3 and charges the price when %s fails', async (slug, fail) => {
    const payer = paid.payers[3]!;
    const before = await paid.balance(payer.address);
    fail();
    const out = await overHttp(payer, path, { address: fresh() });
    expect(out.status).toBe(200);
    expect(out.body.summary).toBe('2/3 steps succeeded');
    expect(steps(out).find((s) => s.slug === slug)).toMatchObject({
      ok: false,
      result: { code: expect.any(String), error: expect.any(String) },
    });
    expect(await paid.balance(payer.address)).toBe(before - PRICE.readiness);
  });

  it('fails with 502 and charges nothing when all three steps fail', async () => {
    const payer = paid.payers[3]!;
    const before = await paid.balance(payer.address);
    for (const [, fail] of failures) fail();
    const out = await overHttp(payer, path, { address: fresh() });
    expect(out.status).toBe(502);
    expect(codeOf(out)).toBe('upstream_unavailable');
    expect(out.receipt).toBeUndefined();
    expect(await paid.balance(payer.address)).toBe(before);
  });
});

describe('transfers-evm, paid with x402 version 1 on the local Base chain', () => {
  const v1Client = (payer: PrivateKeyAccount) => new x402Client().registerV1('base', new ExactEvmSchemeV1(payer));

  it('lists a transfer made in the test, newest first, paid by the official client over X-PAYMENT', async () => {
    const [sender, receiver] = [base.payers[0]!, base.payers[1]!];
    const wallet = createWalletClient({
      account: sender,
      chain: localViemChain(base.chain),
      transport: localTransport(base.chain),
    });
    const hash = await wallet.writeContract({
      address: base.token,
      abi: testUsdcAbi,
      functionName: 'transfer',
      args: [receiver.address, 500_000n],
    });
    await createPublicClient({ transport: localTransport(base.chain) }).waitForTransactionReceipt({
      hash,
      pollingInterval: 20,
    });
    const before = await base.balance(sender.address);
    const res = await wrapFetchWithPayment(
      fetch,
      v1Client(sender),
    )(`${server.url}/api/transfers/evm?address=${receiver.address}&limit=10`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as {
      address: string;
      chain: string;
      count: number;
      fromBlock: number;
      transfers: Array<Record<string, unknown>>;
    };
    expect(body).toMatchObject({ address: receiver.address, chain: 'base', fromBlock: 0 });
    expect(body.transfers[0]).toMatchObject({
      hash,
      from: sender.address,
      to: receiver.address,
      token: base.token,
      symbol: 'USDC',
      decimals: 6,
      value: '500000',
      formatted: '0.5',
      direction: 'in',
    });
    expect(body.transfers.some((t) => t.from === '0x0000000000000000000000000000000000000000')).toBe(true); // the mint that funded it
    expect(decodePaymentResponseHeader(res.headers.get('X-PAYMENT-RESPONSE')!)).toMatchObject({
      success: true,
      network: 'base',
    });
    expect(await base.balance(sender.address)).toBe(before - PRICE.transfers);
  });

  it('lists over MCP with a version-1 payment, including the settlement of the previous paid call', async () => {
    const payer = base.payers[0]!;
    const args = { address: payer.address, limit: 5 };
    const challenge = (await mcp.callTool({ name: 'transfers-evm', arguments: args }))
      .structuredContent as unknown as PaymentRequiredV1;
    expect(challenge.x402Version).toBe(1);
    const payment = await v1Client(payer).createPaymentPayload(challenge as never);
    const result = await mcp.callTool({ name: 'transfers-evm', arguments: args, _meta: { 'x402/payment': payment } });
    expect(result.isError).toBeFalsy();
    const body = result.structuredContent as { transfers: Array<Record<string, unknown>> };
    expect(body.transfers[0]).toMatchObject({ from: payer.address, to: base.payTo, value: '1000', direction: 'out' });
    expect(result._meta?.['x402/payment-response']).toMatchObject({ success: true, network: 'base' });
  });

  it('refuses a bad query before payment, and a fromBlock past the chain head after verification without charging', async () => {
    const invalid = await fetch(`${server.url}/api/transfers/evm?address=nope`);
    expect(invalid.status).toBe(400);
    const payer = base.payers[2]!;
    const before = await base.balance(payer.address);
    const res = await wrapFetchWithPayment(
      fetch,
      v1Client(payer),
    )(`${server.url}/api/transfers/evm?address=${payer.address}&fromBlock=99999999`);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { field: string } }).error.field).toBe('fromBlock');
    expect(await base.balance(payer.address)).toBe(before);
  });
});
