import { generateKeyPairSigner, type Address as SolAddress } from '@solana/kit';
import { createPublicClient, createTestClient, type Address } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/config.js';
import { SOLANA_DEVNET } from '../../../src/providers/chain/settings.js';
import { createEvmRpcProvider } from '../../../src/providers/chain/evm-rpc.js';
import {
  createWalletProvider,
  stablecoinTotal,
  STABLECOIN_TRANSFER_GAS,
  type BalanceRead,
} from '../../../src/providers/chain/wallet.js';
import { startLocalChain, type LocalChain } from '../../support/chain/node.js';
import { LAMPORTS_PER_SOL, SolanaLedger } from '../../support/chain/solana-ledger.js';
import { startSolanaRpc, type SolanaRpc } from '../../support/chain/solana.js';
import { BASE_SEPOLIA_USDC, deployTestUsdc, localTransport, localViemChain, mint } from '../../support/chain/token.js';
import { rpcMethod, startEvmRpcProxy, type EvmRpcProxy } from '../../support/upstreams/evm-rpc.js';
import { startSolanaWalletRpc, type SolanaWalletRpc } from '../../support/upstreams/solana-rpc.js';

let chain: LocalChain;
let proxy: EvmRpcProxy;
let ledger: SolanaLedger;
let solanaInner: SolanaRpc;
let solana: SolanaWalletRpc;
let mintAddress: SolAddress;
let wallet: Address;
let solanaWallet: SolAddress;
const signal = new AbortController().signal;

beforeAll(async () => {
  chain = await startLocalChain({ chainId: 84532, accountCount: 2 });
  await deployTestUsdc(chain, { name: 'USDC', version: '2', at: BASE_SEPOLIA_USDC });
  proxy = await startEvmRpcProxy(chain.rpcUrl);
  wallet = privateKeyToAccount(generatePrivateKey()).address;
  await mint(chain, BASE_SEPOLIA_USDC, wallet, 12_345_678n);
  await createTestClient({
    mode: 'hardhat',
    chain: localViemChain(chain),
    transport: localTransport(chain),
  }).setBalance({ address: wallet, value: 3n * 10n ** 15n });
  ledger = await SolanaLedger.create();
  mintAddress = await ledger.createMint(6);
  solanaWallet = (await generateKeyPairSigner()).address;
  ledger.airdrop(solanaWallet, LAMPORTS_PER_SOL / 2n);
  await ledger.fund(solanaWallet, mintAddress, 4_500_000n);
  solanaInner = await startSolanaRpc(ledger);
  solana = await startSolanaWalletRpc(ledger, solanaInner.url);
}, 120_000);
afterAll(async () => {
  await solana?.stop();
  await solanaInner?.close();
  await proxy?.stop();
  await chain?.stop();
});

/** A provider over a network table: the local chain, a network whose RPC is down, and the local Solana ledger. */
function provider(only?: string) {
  const networks = [
    {
      id: 'eip155:84532',
      family: 'evm',
      asset: BASE_SEPOLIA_USDC,
      decimals: 6,
      name: 'USDC',
      version: '2',
      rpcUrl: proxy.url,
      label: 'Base Sepolia (local)',
    },
    {
      id: 'eip155:999001',
      family: 'evm',
      asset: BASE_SEPOLIA_USDC,
      decimals: 6,
      name: 'USDC',
      version: '2',
      rpcUrl: 'http://127.0.0.1:9/',
      label: 'Down chain',
    },
    { id: SOLANA_DEVNET, family: 'svm', asset: mintAddress, decimals: 6, rpcUrl: solana.url, label: 'Solana (local)' },
  ];
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    NETWORKS_JSON: JSON.stringify({ replace: true, networks }),
    UPSTREAM_TIMEOUT_MS: '2000',
    UPSTREAM_RETRIES: '0',
    ...(only ? { WALLET_READINESS_NETWORKS: only } : {}),
  });
  return createWalletProvider(config.networks, config.chainTools, createEvmRpcProvider(config.chainTools.rpc));
}

const ok = (reads: BalanceRead[], network: string) => {
  const read = reads.find((r) => r.network === network);
  if (!read?.ok) throw new Error(`${network} was not read: ${JSON.stringify(read)}`);
  return read;
};

describe('the wallet reads', () => {
  it('reads native and stablecoin balances from each chain, and Solana SOL and USDC for a Solana address', async () => {
    const reads = await provider().balances(wallet, solanaWallet, signal);
    const base = ok(reads, 'eip155:84532');
    expect(base.native).toEqual({ symbol: 'ETH', decimals: 18, raw: String(3n * 10n ** 15n), formatted: '0.003' });
    expect(base.stablecoin).toEqual({
      symbol: 'USDC',
      decimals: 6,
      raw: '12345678',
      formatted: '12.345678',
      token: BASE_SEPOLIA_USDC,
    });
    const sol = ok(reads, SOLANA_DEVNET);
    expect(sol.native).toMatchObject({ symbol: 'SOL', raw: String(ledger.lamports(solanaWallet)), formatted: '0.5' });
    expect(sol.stablecoin).toMatchObject({ symbol: 'USDC', raw: '4500000', formatted: '4.5', token: mintAddress });
    expect(stablecoinTotal(reads)).toBe('16.845678');
  });

  it('reports a network whose RPC is down as not ok with the reason, next to the networks that answered', async () => {
    const reads = await provider().balances(wallet, undefined, signal);
    const down = reads.find((r) => r.network === 'eip155:999001');
    expect(down).toMatchObject({ ok: false, label: 'Down chain', error: { code: 'upstream_unavailable' } });
    expect(ok(reads, 'eip155:84532').ok).toBe(true);
    expect(reads.some((r) => r.network === SOLANA_DEVNET)).toBe(false); // no Solana address, no Solana read
  });

  it('reads a zero balance of a wallet that never held anything as zero, not as a failure', async () => {
    const nobody = privateKeyToAccount(generatePrivateKey()).address;
    const solNobody = (await generateKeyPairSigner()).address;
    const reads = await provider('eip155:84532,' + SOLANA_DEVNET).balances(nobody, solNobody, signal);
    expect(reads.map((r) => r.ok)).toEqual([true, true]);
    expect(reads.map((r) => (r.ok ? r.stablecoin.raw : 'x'))).toEqual(['0', '0']);
  });

  it('reads only the networks WALLET_READINESS_NETWORKS names', async () => {
    const p = provider('eip155:84532');
    expect(p.networks).toEqual(['eip155:84532']);
    expect((await p.balances(wallet, solanaWallet, signal)).map((r) => r.network)).toEqual(['eip155:84532']);
  });

  it('takes the gas price of each chain and prices one stablecoin transfer at it', async () => {
    const reads = await provider().gas(signal);
    const price = await createPublicClient({ transport: localTransport(chain) }).getGasPrice();
    const base = reads.find((r) => r.network === 'eip155:84532');
    expect(base).toMatchObject({
      ok: true,
      gasPriceWei: price.toString(),
      stablecoinTransfer: { gas: 65_000, fee: { symbol: 'ETH', raw: (price * STABLECOIN_TRANSFER_GAS).toString() } },
    });
    expect(reads.find((r) => r.network === 'eip155:999001')?.ok).toBe(false);
  });

  it('turns a JSON-RPC error of one call into that network’s error', async () => {
    proxy.failNext('error200', 1, rpcMethod('eth_gasPrice'));
    const [read] = await provider('eip155:84532').gas(signal);
    expect(read).toMatchObject({ ok: false, error: { code: 'upstream_unavailable' } });
    expect(JSON.stringify(read)).not.toMatch(/not charged/);
  });
});
