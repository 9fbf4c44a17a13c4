/**
 * Solana `exact` (docs/payments.md#solana-exact) on the official `@x402/svm` 2.27.0, unmodified: its server scheme, its
 * facilitator scheme (instruction layout, compute budget caps, TransferChecked mint/destination ATA/amount,
 * client signatures, fee payer ours and not the authority, simulation, co-sign, send, confirm) and, in the tests,
 * its client scheme. One thin wrapper runs the fee-payer isolation the library's standard path leaves out (our
 * fee payer in no instruction, its token account never the source) before the library's checks, and reports RPC
 * failures as such (svm-rpc.ts: lost send answers are followed by signature, never reported as a plain failure).
 * `@x402/svm`'s `@solana-program/*` dependencies declare a peer of `@solana/kit` ^5 while we pin 8.4.0; the
 * client, verification and co-signing work with it, as the rail and end-to-end tests prove on a real SVM (litesvm).
 */
import {
  createKeyPairSignerFromBytes,
  getBase58Decoder,
  type Address,
  type GetSignatureStatusesApi,
  type IsBlockhashValidApi,
  type MessagePartialSigner,
  type Rpc,
  type TransactionPartialSigner,
} from '@solana/kit';
import type { x402Facilitator } from '@x402/core/facilitator';
import type {
  Network,
  PaymentPayload,
  PaymentRequirements,
  SchemeNetworkFacilitator,
  SettleResponse,
  VerifyResponse,
} from '@x402/core/types';
import {
  createRpcClient,
  toFacilitatorSvmSigner,
  type FacilitatorRpcClient,
  type FacilitatorSvmSigner,
} from '@x402/svm';
import { ExactSvmScheme as ExactSvmFacilitatorScheme } from '@x402/svm/exact/facilitator';
import type { Config } from '../../../config/config.js';
import type { NetworkEntry } from '../../../shared/networks.js';
import type { PaymentCode } from '../../../shared/errors.js';
import { SVM_EXACT } from '../info.js';
import type { LookupResult, PendingSettlement, LoadedRail, InProcessSettings } from '../rail.js';
import { settleTraced, traceCall } from '../rpc-trace.js';
import { lookupOtherFeePayer } from './history.js';
import { guardSvmSigner } from './rpc.js';
import { svmExactServer } from './server.js';
import { decodeSvmPayment, feePayerAbuse } from './transaction.js';

export { FEE_PAYER_NOT_ISOLATED, FEE_PAYER_TRANSFERRING_FUNDS } from './transaction.js';
export { svmExactReplayKey } from './server.js';

/**
 * Caps on what a payer may make our fee payer spend. The official client asks for 20,000 compute units at
 * 1 microlamport each and two signatures (payer + fee payer); these caps leave wallets room while bounding a
 * transaction's priority fee to 5,000 lamports (one signature's base fee).
 */
export const SVM_LIMITS = {
  maxComputeUnits: 100_000,
  maxPriorityFeeMicroLamports: 50_000,
  maxRequiredSignatures: 2,
} as const;

/**
 * The fee payer as a kit signer from the 64-byte keypair. `registerInProcess` is synchronous and kit imports the
 * key asynchronously (WebCrypto), so the signer delegates to the imported one; the address is known at once.
 */
function feePayerSigner(secret: Uint8Array): TransactionPartialSigner & MessagePartialSigner {
  const imported = createKeyPairSignerFromBytes(secret);
  imported.catch(() => undefined); // the key was validated when the configuration was parsed
  return {
    address: getBase58Decoder().decode(secret.slice(32)) as Address,
    signMessages: async (messages, config) => (await imported).signMessages(messages, config),
    signTransactions: async (transactions, config) => (await imported).signTransactions(transactions, config),
  };
}

/**
 * The RPC client of a network entry: its `rpcUrl`, else the cluster's public endpoint (rate-limited: set an
 * `rpcUrl` in production). Undefined for ids the library does not know (it serves Solana mainnet, devnet, testnet).
 */
function rpcClient(net: NetworkEntry): FacilitatorRpcClient | undefined {
  try {
    return createRpcClient(net.id as `${string}:${string}`, net.rpcUrl);
  } catch {
    return undefined;
  }
}

/** The official facilitator scheme behind the fee-payer isolation check. */
class IsolatedFeePayerScheme implements SchemeNetworkFacilitator {
  readonly scheme = 'exact';
  readonly caipFamily = 'solana:*';
  constructor(
    private readonly inner: ExactSvmFacilitatorScheme,
    private readonly signer: FacilitatorSvmSigner,
  ) {}
  getExtra(network: string) {
    return this.inner.getExtra(network);
  }
  getSigners(network: string) {
    return this.inner.getSigners(network);
  }
  private async abuse(payload: PaymentPayload, requirements: PaymentRequirements) {
    const tx = decodeSvmPayment(payload);
    if (!tx) return undefined; // the library refuses what does not decode
    const found = await feePayerAbuse(tx, this.signer.getAddresses(), this.signer, requirements.network);
    return found ? { ...found, payer: tx.tokenPayer } : undefined;
  }
  /** A refusal that followed an RPC failure is the RPC's failure (thrown: `facilitator_unavailable`), not the payment's. */
  verify(payload: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResponse> {
    return traceCall(async (trace) => {
      const abuse = await this.abuse(payload, requirements);
      if (abuse)
        return { isValid: false, invalidReason: abuse.reason, invalidMessage: abuse.message, payer: abuse.payer };
      const result = await this.inner.verify(payload, requirements);
      if (!result.isValid && trace.rpcFailure)
        throw new Error(`The Solana RPC failed during verification: ${trace.rpcFailure}`);
      return result;
    });
  }
  /** Until a transaction may have reached the cluster, an RPC failure ends in `facilitator_unavailable`, nothing charged. */
  settle(payload: PaymentPayload, requirements: PaymentRequirements): Promise<SettleResponse> {
    return traceCall(async (trace) => {
      const base = { success: false, transaction: '', network: requirements.network as Network };
      const abuse = await this.abuse(payload, requirements);
      if (abuse) return { ...base, errorReason: abuse.reason, errorMessage: abuse.message, payer: abuse.payer };
      const unavailable = (why: string): SettleResponse => ({
        ...base,
        errorReason: 'facilitator_unavailable' satisfies PaymentCode,
        errorMessage: `The Solana RPC failed before the transaction was sent (${why}).`,
      });
      return settleTraced(trace, () => this.inner.settle(payload, requirements), unavailable);
    });
  }
}

/** Builds the facilitator scheme for the given networks from a 64-byte fee-payer keypair; undefined when none is servable. */
export function svmFacilitatorScheme(
  secret: Uint8Array,
  nets: readonly NetworkEntry[],
): { scheme: SchemeNetworkFacilitator; networks: string[] } | undefined {
  const clients: Record<string, FacilitatorRpcClient> = {};
  for (const net of nets) {
    const client = rpcClient(net);
    if (client) clients[net.id] = client;
  }
  const networks = Object.keys(clients);
  if (networks.length === 0) return undefined;
  const signer = guardSvmSigner(toFacilitatorSvmSigner(feePayerSigner(secret), clients));
  const inner = new ExactSvmFacilitatorScheme(signer, undefined, { ...SVM_LIMITS });
  return { scheme: new IsolatedFeePayerScheme(inner, signer), networks };
}

async function lookup(pending: PendingSettlement, net: NetworkEntry, config: Config): Promise<LookupResult> {
  const tx = decodeSvmPayment(pending.payload);
  if (!tx) return { type: 'failed', reason: 'invalid_payment' };
  const secret = config.facilitator.keys.svm;
  const rpc = rpcClient(net) as Rpc<GetSignatureStatusesApi & IsBlockhashValidApi> | undefined;
  if (!rpc) return { type: 'pending' };
  let signature = pending.transaction;
  if (!signature) {
    // Ed25519 is deterministic: the transaction id is our fee payer's signature over the message, computable again.
    // Another fee payer (a remote facilitator) signs a transaction id we cannot compute: found by its message.
    if (!secret || getBase58Decoder().decode(secret.slice(32)) !== tx.feePayer)
      return lookupOtherFeePayer(rpc as never, tx, pending.claimedAt);
    const signer = await createKeyPairSignerFromBytes(secret);
    const [signed] = await signer.signMessages([
      { content: Uint8Array.from(tx.transaction.messageBytes), signatures: {} },
    ]);
    signature = getBase58Decoder().decode(signed![signer.address]!);
  }
  const { value } = await rpc.getSignatureStatuses([signature as never], { searchTransactionHistory: true }).send();
  const status = value[0];
  if (status) {
    if (status.err) return { type: 'failed', reason: 'transaction_failed' };
    if (status.confirmationStatus === 'confirmed' || status.confirmationStatus === 'finalized')
      return { type: 'settled', transaction: signature };
    return { type: 'pending' };
  }
  // Not on chain: once its blockhash has expired the transaction can never land.
  const valid = await rpc.isBlockhashValid(tx.blockhash as never, { commitment: 'processed' }).send();
  return valid.value ? { type: 'pending' } : { type: 'failed', reason: 'blockhash_expired' };
}

/** `exact` on Solana: a partially signed transaction with TransferChecked to the pay-to's ATA; we co-sign as fee payer. */
export const svmExactRail: LoadedRail = {
  ...SVM_EXACT,
  ...svmExactServer,
  registerInProcess(facilitator: x402Facilitator, nets: readonly NetworkEntry[], config: InProcessSettings): string[] {
    const secret = config.facilitator.keys.svm;
    if (!secret) return [];
    const built = svmFacilitatorScheme(secret, nets);
    if (!built) return [];
    facilitator.register(built.networks as `${string}:${string}`[], built.scheme);
    return built.networks;
  },
  lookup,
};
