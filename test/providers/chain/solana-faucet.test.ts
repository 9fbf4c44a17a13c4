import { createKeyPairSignerFromBytes, generateKeyPairSigner, type Address } from '@solana/kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/shared/log.js';
import { createSolanaFaucet } from '../../../src/providers/chain/solana-faucet.js';
import { newSolanaKeypairBytes } from '../../support/chain/solana-env.js';
import { LAMPORTS_PER_SOL, SolanaLedger } from '../../support/chain/solana-ledger.js';
import { startSolanaRpc, type SolanaRpc } from '../../support/chain/solana.js';
import { toolFailure } from '../../support/upstreams/open-data.js';

let ledger: SolanaLedger;
let rpc: SolanaRpc;
let mint: Address;
let funded: Uint8Array;
const signal = new AbortController().signal;

beforeAll(async () => {
  ledger = await SolanaLedger.create();
  mint = await ledger.createMint(6);
  funded = newSolanaKeypairBytes();
  const faucet = await createKeyPairSignerFromBytes(funded);
  ledger.airdrop(faucet.address, 10n * LAMPORTS_PER_SOL);
  await ledger.fund(faucet.address, mint, 100_000_000n);
  rpc = await startSolanaRpc(ledger);
});
afterAll(async () => {
  await rpc?.close();
});

const fresh = async () => (await generateKeyPairSigner()).address;
const faucet = (key = funded) =>
  createSolanaFaucet(
    { key, rpcUrl: rpc.url, usdcMint: mint, timeoutMs: 5_000, confirmTimeoutMs: 10_000, pollMs: 20 },
    silentLogger,
  );

describe('the self-hosted Solana devnet faucet', () => {
  it('sends 0.00125 SOL with a system transfer and returns the confirmed signature', async () => {
    const to = await fresh();
    const drip = await faucet().drip({ network: 'solana-devnet', token: 'sol', address: to }, signal);
    expect(ledger.lamports(to)).toBe(1_250_000n);
    expect(rpc.landed).toContain(drip.transactionHash);
    expect(drip.explorer).toBe(`https://explorer.solana.com/tx/${drip.transactionHash}?cluster=devnet`);
  });

  it('sends 1 USDC, creating the recipient’s token account', async () => {
    const to = await fresh();
    expect(await ledger.tokenBalance(to, mint)).toBe(0n);
    await faucet().drip({ network: 'solana-devnet', token: 'usdc', address: to }, signal);
    expect(await ledger.tokenBalance(to, mint)).toBe(1_000_000n);
  });

  it('makes two drips to one address in one blockhash two transactions, so both are delivered', async () => {
    const to = await fresh();
    const one = faucet();
    const [a, b] = await Promise.all(
      [1, 2].map(() => one.drip({ network: 'solana-devnet', token: 'usdc', address: to }, signal)),
    );
    expect(a!.transactionHash).not.toBe(b!.transactionHash);
    expect(await ledger.tokenBalance(to, mint)).toBe(2_000_000n);
  });

  it('fails, naming the faucet wallet, when the key holds no USDC; nothing is delivered', async () => {
    const poor = newSolanaKeypairBytes();
    ledger.airdrop((await createKeyPairSignerFromBytes(poor)).address, LAMPORTS_PER_SOL);
    const to = await fresh();
    const err = await toolFailure(faucet(poor).drip({ network: 'solana-devnet', token: 'usdc', address: to }, signal));
    expect(err.code).toBe('upstream_unavailable');
    expect(err.message).toMatch(/faucet/);
    expect(await ledger.tokenBalance(to, mint)).toBe(0n);
  });
});
