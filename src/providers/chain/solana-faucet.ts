/**
 * The self-hosted faucet on Solana devnet (docs/spec-notes.md#self-hosted-faucet), on `@solana/kit` and the official
 * SPL program clients: SOL with `SystemProgram.transfer`; USDC by creating the recipient's associated token account
 * idempotently and `transferChecked` (6 decimals). Each transaction carries a memo with a random id, so two drips to
 * one address in one blockhash are two transactions (identical ones would be deduplicated by the cluster and one drip
 * would be sold twice). Waits until the signature is confirmed; a failed transaction fails the call.
 */
import { randomUUID } from 'node:crypto';
import {
  address as toAddress,
  appendTransactionMessageInstructions,
  createKeyPairSignerFromBytes,
  createTransactionMessage,
  getSignatureFromTransaction,
  pipe,
  sendTransactionWithoutConfirmingFactory,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Address,
  type Instruction,
  type KeyPairSigner,
  type Rpc,
  type Signature,
  type SolanaRpcApi,
} from '@solana/kit';
import { getTransferSolInstruction } from '@solana-program/system';
import {
  findAssociatedTokenPda,
  getCreateAssociatedTokenIdempotentInstruction,
  getTransferCheckedInstruction,
  TOKEN_PROGRAM_ADDRESS,
} from '@solana-program/token';
import { ToolError } from '../../shared/errors.js';
import type { Logger } from '../../shared/log.js';
import { DRIP_AMOUNTS, explorerUrl, type Drip, type DripRequest, type Faucet } from './faucet.js';
import { solanaCall, solanaRpc } from './solana-rpc.js';

/** The SPL Memo program (v2). */
const MEMO_PROGRAM = toAddress('MemoSq4gqABAXKb96qnH8TysNcWxMyWCqXgDLGmfcHr');
const LABEL = 'Solana devnet RPC';

/** Settings of the self-hosted Solana faucet. */
export interface SolanaFaucetOptions {
  /** 64-byte keypair (seed + public key). */
  key: Uint8Array;
  rpcUrl: string;
  /** USDC mint on devnet (6 decimals). */
  usdcMint: string;
  timeoutMs: number;
  /** How long to wait for confirmation; default 60 s. */
  confirmTimeoutMs?: number;
  /** Pause between status polls; default 500 ms. */
  pollMs?: number;
}

function memo(text: string): Instruction {
  return { programAddress: MEMO_PROGRAM, data: new TextEncoder().encode(text) };
}

/** The drip's instructions: a SOL transfer, or the recipient's USDC account (idempotent) and a checked transfer; plus a unique memo. */
async function dripInstructions(
  payer: KeyPairSigner,
  mint: Address,
  to: Address,
  token: 'usdc' | 'sol',
): Promise<Instruction[]> {
  const tag = memo(`tollbooth testnet-fund ${randomUUID()}`);
  if (token === 'sol')
    return [getTransferSolInstruction({ source: payer, destination: to, amount: DRIP_AMOUNTS.sol.units }), tag];
  const [source] = await findAssociatedTokenPda({ owner: payer.address, mint, tokenProgram: TOKEN_PROGRAM_ADDRESS });
  const [destination] = await findAssociatedTokenPda({ owner: to, mint, tokenProgram: TOKEN_PROGRAM_ADDRESS });
  return [
    getCreateAssociatedTokenIdempotentInstruction({ payer, ata: destination, owner: to, mint }),
    getTransferCheckedInstruction({
      source,
      mint,
      destination,
      authority: payer,
      amount: DRIP_AMOUNTS.usdc.units,
      decimals: DRIP_AMOUNTS.usdc.decimals,
    }),
    tag,
  ];
}

/** Polls the signature's status until it is confirmed; a failed or unconfirmed drip throws. */
async function waitForConfirmation(
  rpc: Rpc<SolanaRpcApi>,
  signature: Signature,
  options: SolanaFaucetOptions,
  log: Logger,
): Promise<void> {
  const deadline = Date.now() + (options.confirmTimeoutMs ?? 60_000);
  while (Date.now() < deadline) {
    const { value } = await solanaCall(LABEL, options.timeoutMs, undefined, (abortSignal) =>
      rpc.getSignatureStatuses([signature]).send({ abortSignal }),
    );
    const status = value[0];
    if (status?.err) {
      log.error('faucet drip failed on chain', {
        transaction: signature,
        err: JSON.stringify(status.err, (_k, v: unknown) => (typeof v === 'bigint' ? String(v) : v)),
      });
      throw new ToolError(
        'upstream_unavailable',
        `The drip transaction ${signature} failed on chain (the faucet may be out of funds). Try again later.`,
      );
    }
    if (status && (status.confirmationStatus === 'confirmed' || status.confirmationStatus === 'finalized')) return;
    await new Promise((r) => setTimeout(r, options.pollMs ?? 500));
  }
  throw new ToolError(
    'upstream_timeout',
    `The drip ${signature} was sent but not confirmed in time; check ${explorerUrl('solana-devnet', signature)} before asking again.`,
  );
}

/** Creates the self-hosted Solana devnet faucet (SOL and USDC). */
export function createSolanaFaucet(options: SolanaFaucetOptions, log: Logger): Faucet {
  const rpc = solanaRpc(options.rpcUrl);
  const send = sendTransactionWithoutConfirmingFactory({ rpc });
  const signer = createKeyPairSignerFromBytes(options.key);
  signer.catch(() => undefined); // validated when the configuration was parsed
  const mint = toAddress(options.usdcMint);

  return {
    name: 'self-hosted',
    async drip({ network, token, address }: DripRequest, signal: AbortSignal): Promise<Drip> {
      if (token === 'eth')
        throw new ToolError('invalid_input', `token eth is only available on base-sepolia.`, {
          field: 'token',
        });
      const payer = await signer;
      const ixs = await dripInstructions(payer, mint, toAddress(address), token);
      const { value: blockhash } = await solanaCall(LABEL, options.timeoutMs, signal, (abortSignal) =>
        rpc.getLatestBlockhash().send({ abortSignal }),
      );
      const message = pipe(
        createTransactionMessage({ version: 0 }),
        (m) => setTransactionMessageFeePayerSigner(payer, m),
        (m) => setTransactionMessageLifetimeUsingBlockhash(blockhash, m),
        (m) => appendTransactionMessageInstructions(ixs, m),
      );
      const tx = await signTransactionMessageWithSigners(message);
      const signature = getSignatureFromTransaction(tx);
      try {
        await solanaCall(LABEL, options.timeoutMs, signal, (abortSignal) =>
          send(tx as Parameters<typeof send>[0], { commitment: 'confirmed', abortSignal }),
        );
      } catch (err) {
        const text = String((err as Error).message) + JSON.stringify((err as { cause?: unknown }).cause ?? '');
        if (/insufficient|never land/i.test(text)) {
          log.error('the self-hosted Solana faucet could not send', { network, token, faucet: payer.address });
          throw new ToolError(
            'upstream_unavailable',
            `The faucet's wallet cannot send ${token.toUpperCase()} right now (out of funds?). Try again later.`,
          );
        }
        throw err;
      }
      await waitForConfirmation(rpc, signature, options, log);
      return { transactionHash: signature, explorer: explorerUrl(network, signature) };
    },
  };
}
