/**
 * What the chain says about a payment the agent sent when the remote's answer leaves its fate open (a refusal, an
 * error or a failed settlement after the payment left): `used` (the money moved: book it settled), `unused` (release
 * it), or `unknown` (no RPC, the check failed, or it could still land: keep it counted). The agent never books such
 * a payment as free on a remote's word alone (only a refusal before any settlement is: see after-payment.ts).
 *
 * RPCs: the network table's `rpcUrl` for the payment's network (NETWORKS_JSON; the built-in table has public
 * endpoints), the same URLs the wallets already use. Each family's SDK loads with its first check (src/agent/wallets.ts).
 */
import type { PaymentPayload } from '@x402/core/types';
import type { Hex } from 'viem';
import type { NetworkEntry } from '../shared/networks.js';
import { familyOf, rpcUrlOf } from './networks.js';
import { AUTHORIZATION_STATE_ABI, NONCE_BITMAP_ABI } from '../shared/evm-abi.js';

/** What the chain says about one sent payment. */
export type AuthorizationState = { type: 'used' } | { type: 'unused' } | { type: 'unknown'; why: string };

/**
 * Refusal reasons that mean "this very authorization was already used", the one list: ours, the official SDK's for
 * EIP-3009 and Permit2 (Permit2's `InvalidNonce` is a nonce whose bit is set), and the SVM facilitator's duplicate.
 */
export const ALREADY_USED_REASONS: readonly string[] = [
  'payment_already_used',
  'invalid_exact_evm_nonce_already_used',
  'permit2_invalid_nonce',
  'duplicate_settlement',
];
const ALREADY_USED = /already_used|nonce_already|nonce_used|already_settled|already_processed|duplicate_settlement/i;

/** True when a remote's refusal reason says the payment's authorization was already used (see `ALREADY_USED_REASONS`). */
export function meansAlreadyUsed(reason: string | undefined): boolean {
  return reason !== undefined && (ALREADY_USED_REASONS.includes(reason) || ALREADY_USED.test(reason));
}

interface EvmInner {
  authorization?: { from?: string; nonce?: string };
  permit2Authorization?: { from?: string; nonce?: string };
}

/** EIP-3009 `authorizationState(from, nonce)` on the asset, or Permit2's `nonceBitmap(owner, nonce >> 8)` bit. */
async function evmState(
  payload: PaymentPayload,
  asset: string,
  rpcUrl: string,
  timeoutMs: number,
): Promise<AuthorizationState> {
  const [{ createPublicClient, http }, { PERMIT2_ADDRESS }] = await Promise.all([import('viem'), import('@x402/evm')]);
  const client = createPublicClient({ transport: http(rpcUrl, { timeout: timeoutMs, retryCount: 1 }) });
  const inner = (payload.payload ?? {}) as EvmInner;
  if (inner.authorization?.from && inner.authorization.nonce) {
    const used = await client.readContract({
      address: asset as Hex,
      abi: AUTHORIZATION_STATE_ABI,
      functionName: 'authorizationState',
      args: [inner.authorization.from as Hex, inner.authorization.nonce as Hex],
    });
    return used ? { type: 'used' } : { type: 'unused' };
  }
  const permit = inner.permit2Authorization;
  if (permit?.from && permit.nonce && /^\d+$/.test(permit.nonce)) {
    const nonce = BigInt(permit.nonce);
    const word = await client.readContract({
      address: PERMIT2_ADDRESS,
      abi: NONCE_BITMAP_ABI,
      functionName: 'nonceBitmap',
      args: [permit.from as Hex, nonce >> 8n],
    });
    return (word >> (nonce & 0xffn)) & 1n ? { type: 'used' } : { type: 'unused' };
  }
  return { type: 'unknown', why: 'the payment carries no EIP-3009 or Permit2 authorization this client can look up' };
}

/** How many of the payer's most recent transactions are searched for the payment. */
const RECENT = 25;

/** The payer's signature and the blockhash of a Solana `exact` payment's transaction, undefined when it does not decode. */
function svmPayment(
  payload: PaymentPayload,
  { kit, svm }: { kit: typeof import('@solana/kit'); svm: typeof import('@x402/svm') },
): { payer: string; signature: Uint8Array; blockhash: string } | undefined {
  const wire = (payload.payload as { transaction?: unknown } | undefined)?.transaction;
  if (typeof wire !== 'string' || wire.length === 0) return undefined;
  try {
    const transaction = svm.decodeTransactionFromPayload({ transaction: wire });
    const payer = svm.getTokenPayerFromTransaction(transaction);
    const signature = payer ? transaction.signatures[payer as never] : undefined;
    if (!signature) return undefined;
    const blockhash = kit.getCompiledTransactionMessageDecoder().decode(transaction.messageBytes).lifetimeToken;
    return { payer, signature, blockhash };
  } catch {
    return undefined;
  }
}

/**
 * Solana: the transaction id is the seller's fee-payer signature, unknown to the payer, so the payer's recent
 * transactions are searched for its own signature. Not found: unused once the blockhash has expired (it can never
 * land), unknown before.
 */
async function svmState(payload: PaymentPayload, rpcUrl: string, timeoutMs: number): Promise<AuthorizationState> {
  const [kit, svm] = await Promise.all([import('@solana/kit'), import('@x402/svm')]);
  const tx = svmPayment(payload, { kit, svm });
  if (!tx) return { type: 'unknown', why: 'the Solana payment does not decode' };
  const mine = kit.getBase58Decoder().decode(tx.signature);
  const rpc = kit.createSolanaRpc(rpcUrl);
  const options = () => ({ abortSignal: AbortSignal.timeout(timeoutMs) });
  const recent = await rpc.getSignaturesForAddress(tx.payer as never, { limit: RECENT }).send(options());
  for (const entry of recent) {
    const found = await rpc
      .getTransaction(entry.signature, { encoding: 'json', maxSupportedTransactionVersion: 0 })
      .send(options());
    if (found?.transaction.signatures.includes(mine as never))
      return found.meta?.err ? { type: 'unused' } : { type: 'used' };
  }
  // A full page may have pushed the payment out of sight: not finding it there proves nothing.
  if (recent.length >= RECENT)
    return {
      type: 'unknown',
      why: `the payer made ${RECENT} or more transactions since; this payment is not among them`,
    };
  const valid = await rpc.isBlockhashValid(tx.blockhash as never, { commitment: 'processed' }).send(options());
  return valid.value
    ? { type: 'unknown', why: 'the Solana transaction could still land until its blockhash expires' }
    : { type: 'unused' };
}

/** Asks the payment's chain whether the payment was used; never throws (a failed check is `unknown`). */
export async function authorizationState(
  payload: PaymentPayload,
  paid: { network: string; asset: string },
  networks: readonly NetworkEntry[],
  timeoutMs: number,
): Promise<AuthorizationState> {
  const family = familyOf(paid.network);
  const rpcUrl = rpcUrlOf(networks, paid.network);
  const net = networks.find((n) => n.id === paid.network);
  try {
    switch (family) {
      case 'evm':
        return rpcUrl
          ? await evmState(payload, paid.asset, rpcUrl, timeoutMs)
          : { type: 'unknown', why: `no RPC URL is configured for ${paid.network} (NETWORKS_JSON rpcUrl)` };
      case 'svm':
        return rpcUrl
          ? await svmState(payload, rpcUrl, timeoutMs)
          : { type: 'unknown', why: `no RPC URL is configured for ${paid.network} (NETWORKS_JSON rpcUrl)` };
      case 'algorand': {
        if (!net) return { type: 'unknown', why: `${paid.network} is not in the network table` };
        const { lookupAlgorandPayment } = await import('../shared/algorand-lookup.js');
        const found = await lookupAlgorandPayment(
          { replayKey: '', payload, requirements: payload.accepted, transaction: '' },
          net,
          timeoutMs,
        );
        return found.type === 'settled'
          ? { type: 'used' }
          : found.type === 'failed'
            ? { type: 'unused' }
            : { type: 'unknown', why: 'algod cannot tell yet (the transaction could still be committed)' };
      }
      case 'stellar':
        return rpcUrl
          ? await (await import('./stellar-state.js')).stellarPaymentState(payload, paid.network, rpcUrl, timeoutMs)
          : { type: 'unknown', why: `no RPC URL is configured for ${paid.network} (NETWORKS_JSON rpcUrl)` };
      default:
        return { type: 'unknown', why: `this client cannot look up payments on ${paid.network}` };
    }
  } catch (err) {
    const reason = String((err as Error)?.message ?? err)
      .split('\n', 1)[0]!
      .slice(0, 200);
    return { type: 'unknown', why: `the chain could not be asked (${reason})` };
  }
}
