import { generateKeyPairSync } from 'node:crypto';
import { createKeyPairSignerFromBytes, generateKeyPairSigner, type Address, type KeyPairSigner } from '@solana/kit';
import { x402Client } from '@x402/core/client';
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { ExactSvmScheme, toClientSvmSigner } from '@x402/svm';
import { SOLANA_DEVNET_CAIP2 } from '@x402/svm';
import { LAMPORTS_PER_SOL, SolanaLedger } from './solana-ledger.js';
import { startSolanaRpc, type SolanaRpc } from './solana.js';

/**
 * The CAIP-2 id the local Solana ledger is published under: Solana devnet's. `@x402/svm` 2.27 accepts only the
 * mainnet, devnet and testnet ids (its client builds its RPC from the id), so the local ledger borrows devnet's,
 * as the local EVM chain borrows Base Sepolia's id.
 */
export const LOCAL_SOLANA_NETWORK = SOLANA_DEVNET_CAIP2;

/** Mint decimals of the local USDC stand-in. */
export const LOCAL_SOLANA_DECIMALS = 6;

/** A fresh 64-byte Solana keypair (seed followed by the public key), as a solana-keygen file holds it. */
export function newSolanaKeypairBytes(): Uint8Array {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const seed = Buffer.from(privateKey.export({ format: 'jwk' }).d ?? '', 'base64url');
  const pub = Buffer.from(publicKey.export({ format: 'jwk' }).x ?? '', 'base64url');
  return Uint8Array.from(Buffer.concat([seed, pub]));
}

/** The local ledger, its RPC look-alike and the accounts a paid Solana call needs, plus Tollbooth's environment. */
export interface SolanaEnvironment {
  ledger: SolanaLedger;
  rpc: SolanaRpc;
  /** The SPL mint (6 decimals) advertised as the payment asset. */
  mint: Address;
  /** A second real mint the payers also hold, for wrong-mint tampering. */
  otherMint: Address;
  /** Pay-to owner; its associated token account for `mint` exists. */
  payTo: Address;
  /** Tollbooth's fee payer (funded with SOL) and its 64-byte keypair. */
  feePayer: KeyPairSigner;
  feePayerSecret: Uint8Array;
  /** Payers holding 10 tokens of each mint and no SOL. */
  payers: KeyPairSigner[];
  /** The network entry (devnet id, local mint, look-alike RPC URL). */
  network: { id: string; family: 'svm'; asset: string; decimals: number; rpcUrl: string; label: string };
  /** Environment for Tollbooth: NETWORKS_JSON with the entry, FACILITATOR_SOLANA_SECRET_KEY, PAY_TO_SOLANA. */
  env: Record<string, string>;
  /** Token balance of an owner for `mint` (or another mint) in base units. */
  balance(owner: Address, mint?: Address): Promise<bigint>;
  stop(): Promise<void>;
}

/** Starts a litesvm ledger behind a look-alike JSON-RPC server with a 6-decimal mint, funded payers, the payee's ATA and a funded fee payer. */
export async function startSolanaEnvironment(payerCount = 4): Promise<SolanaEnvironment> {
  const ledger = await SolanaLedger.create();
  const mint = await ledger.createMint(LOCAL_SOLANA_DECIMALS);
  const otherMint = await ledger.createMint(LOCAL_SOLANA_DECIMALS);
  const payTo = (await generateKeyPairSigner()).address;
  await ledger.fund(payTo, mint);
  await ledger.fund(payTo, otherMint);
  const feePayerSecret = newSolanaKeypairBytes();
  const feePayer = await createKeyPairSignerFromBytes(feePayerSecret);
  ledger.airdrop(feePayer.address, 10n * LAMPORTS_PER_SOL);
  const payers: KeyPairSigner[] = [];
  for (let i = 0; i < payerCount; i++) {
    const payer = await generateKeyPairSigner();
    await ledger.fund(payer.address, mint, 10_000_000n);
    await ledger.fund(payer.address, otherMint, 10_000_000n);
    payers.push(payer);
  }
  const rpc = await startSolanaRpc(ledger);
  const network = {
    id: LOCAL_SOLANA_NETWORK,
    family: 'svm' as const,
    asset: mint,
    decimals: LOCAL_SOLANA_DECIMALS,
    rpcUrl: rpc.url,
    label: 'Solana (local litesvm ledger)',
  };
  return {
    ledger,
    rpc,
    mint,
    otherMint,
    payTo,
    feePayer,
    feePayerSecret,
    payers,
    network,
    env: {
      NETWORKS_JSON: JSON.stringify({ networks: [network] }),
      FACILITATOR_SOLANA_SECRET_KEY: JSON.stringify([...feePayerSecret]),
      PAY_TO_SOLANA: payTo,
    },
    balance: (owner, of = mint) => ledger.tokenBalance(owner, of),
    stop: () => rpc.close(),
  };
}

/** The official x402 client with the official `ExactSvmScheme` for a payer, reading the chain from `rpcUrl`. */
export function svmClient(payer: KeyPairSigner, rpcUrl: string, network = LOCAL_SOLANA_NETWORK): x402Client {
  const client = new x402Client(
    (_v, reqs) => reqs.find((r) => r.network === network && r.scheme === 'exact') ?? reqs[0]!,
  );
  // The local mints are not @x402/svm default assets; an agent opts in to such tokens explicitly.
  client.setSpendControls({ allowedAssets: true });
  return client.register('solana:*', new ExactSvmScheme(toClientSvmSigner(payer), { rpcUrl }));
}

/** Signs a payment for one advertised entry with the official client (a real partially signed transaction). */
export function signSvmPayment(
  payer: KeyPairSigner,
  accepted: PaymentRequirements,
  rpcUrl: string,
): Promise<PaymentPayload> {
  const challenge: PaymentRequired = {
    x402Version: 2,
    resource: { url: 'http://127.0.0.1/api/test', description: '', mimeType: 'application/json' },
    accepts: [accepted],
  };
  return svmClient(payer, rpcUrl, accepted.network).createPaymentPayload(challenge);
}
