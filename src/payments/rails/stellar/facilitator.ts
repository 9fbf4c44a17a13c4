import { BASE_FEE, Keypair, Operation, rpc, TransactionBuilder, type Transaction } from '@stellar/stellar-sdk';
import type {
  Network,
  PaymentPayload,
  PaymentRequirements,
  SchemeNetworkFacilitator,
  SettleResponse,
  VerifyResponse,
} from '@x402/core/types';
import { checkAuthorization } from './authorization.js';
import {
  checkTransferCall,
  decodeStellarTransfer,
  payerAuthorization,
  refusal,
  type PayerAuthorization,
  type StellarFailure,
  type StellarTransfer,
} from './checks.js';
import { stellarRpc } from './network.js';
import { checkSimulation } from './simulation.js';
import { StellarSubmissions, type SettlementBase } from './submissions.js';

/** Settings of one in-process Stellar `exact` facilitator (one network, one settlement account). */
export interface StellarFacilitatorOptions {
  network: string;
  passphrase: string;
  rpcUrl: string;
  /** Secret seed (`S…`) of the account that is the transaction source and pays the fees. */
  secret: string;
  /** Bound on each RPC request. */
  rpcTimeoutMs: number;
  /** How long settle waits for the transaction to land before answering `settlement_pending` with its hash. */
  confirmationTimeoutMs: number;
  pollIntervalMs?: number;
  /** Largest total fee (inclusion + resources) the facilitator pays for one settlement, in stroops. */
  maxFeeStroops?: number;
}

/** Default fee ceiling per settlement (0.005 XLM), as in the x402 Stellar spec. */
export const DEFAULT_MAX_FEE_STROOPS = 50_000n;

type Checked =
  { ok: true; transfer: StellarTransfer; auth: PayerAuthorization } | ({ ok: false; payer?: string } & StellarFailure);

/**
 * The `exact` scheme on Stellar, facilitator side, on @stellar/stellar-sdk 15: verifies the payer's signed
 * Soroban authorization of `transfer(from, payTo, amount)` and settles it in a transaction of our own account,
 * which pays the fees (`areFeesSponsored`). Settlements of one account run one at a time (sequence numbers).
 */
export class ExactStellarFacilitatorScheme implements SchemeNetworkFacilitator {
  readonly scheme = 'exact';
  readonly caipFamily = 'stellar:*';
  private readonly keypair: Keypair;
  private readonly server: rpc.Server;
  private readonly facilitators: ReadonlySet<string>;
  private queue: Promise<unknown> = Promise.resolve();
  /** Our submissions that may still land (settling the same authorization again waits for that transaction). */
  private readonly submissions: StellarSubmissions;

  constructor(private readonly options: StellarFacilitatorOptions) {
    this.keypair = Keypair.fromSecret(options.secret);
    this.server = stellarRpc(options.rpcUrl, options.rpcTimeoutMs);
    this.facilitators = new Set([this.keypair.publicKey()]);
    this.submissions = new StellarSubmissions(this.server, options.pollIntervalMs ?? 1000);
  }

  /** `areFeesSponsored: true`: the client never pays network fees. */
  getExtra(): Record<string, unknown> {
    return { areFeesSponsored: true };
  }

  /** The settlement account. */
  getSigners(): string[] {
    return [this.keypair.publicKey()];
  }

  /** Checks the payment offline, then simulates the client's transaction on the current ledger. RPC failures throw. */
  async verify(payload: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResponse> {
    const checked = await this.check(payload, requirements);
    if (!checked.ok)
      return {
        isValid: false,
        invalidReason: checked.reason,
        invalidMessage: checked.message,
        ...(checked.payer ? { payer: checked.payer } : {}),
      };
    const payer = checked.auth.address;
    const sim = await this.server.simulateTransaction(checked.transfer.tx);
    const refused = checkSimulation(sim, checked.transfer, requirements, this.maxFeeStroops());
    if (refused) return { isValid: false, invalidReason: refused.reason, invalidMessage: refused.message, payer };
    return { isValid: true, payer };
  }

  /**
   * Re-checks the payment, then (one settlement at a time) rebuilds it as our transaction, simulates, signs,
   * submits and waits for the result. Once submitted, an unknown outcome is `settlement_pending` with the hash.
   */
  async settle(payload: PaymentPayload, requirements: PaymentRequirements): Promise<SettleResponse> {
    const deadline = Date.now() + this.options.confirmationTimeoutMs;
    const network = requirements.network;
    // A retry of a settlement we already submitted asks about that transaction before anything else: by now the
    // authorization may have expired, which must not turn a transfer that landed into a refusal.
    const earlier = this.earlierSubmission(payload, requirements);
    if (earlier) {
      const outcome = await this.exclusive(() => this.submissions.previous(earlier.id, deadline, earlier.base));
      if (outcome) return outcome;
    }
    let checked: Checked;
    try {
      checked = await this.check(payload, requirements);
    } catch (err) {
      return {
        success: false,
        errorReason: 'settle_exact_stellar_rpc_unavailable',
        errorMessage: `The Stellar RPC failed before anything was submitted: ${(err as Error).message}`,
        transaction: '',
        network,
      };
    }
    if (!checked.ok)
      return {
        success: false,
        errorReason: checked.reason,
        errorMessage: checked.message,
        transaction: '',
        network,
        ...(checked.payer ? { payer: checked.payer } : {}),
      };
    const { transfer, auth } = checked;
    return this.exclusive(() => this.submit(transfer, auth, requirements, deadline));
  }

  private async check(payload: PaymentPayload, req: PaymentRequirements): Promise<Checked> {
    if (payload.x402Version !== 2)
      return { ok: false, reason: 'invalid_x402_version', message: 'Stellar `exact` exists in x402 version 2 only.' };
    if (payload.accepted?.scheme !== 'exact' || req.scheme !== 'exact')
      return { ok: false, reason: 'unsupported_scheme', message: 'This facilitator settles the `exact` scheme only.' };
    if (payload.accepted.network !== req.network || req.network !== this.options.network) {
      return {
        ok: false,
        reason: 'network_mismatch',
        message: `The payment is for ${payload.accepted.network}; this facilitator settles ${this.options.network}.`,
      };
    }
    const decoded = decodeStellarTransfer(payload, this.options.passphrase);
    if (!decoded.ok) return decoded;
    const transfer = decoded.transfer;
    const payer = transfer.from;
    const call = checkTransferCall(transfer, req, this.facilitators);
    if (call) return { ok: false, ...call, ...(payer ? { payer } : {}) };
    const latest = await this.server.getLatestLedger();
    const auth = checkAuthorization(transfer, req, this.facilitators, latest.sequence, this.options.passphrase);
    if (!auth.ok) return { ...auth, ...(payer ? { payer } : {}) };
    return { ok: true, transfer, auth };
  }

  private maxFeeStroops(): number | bigint {
    return this.options.maxFeeStroops ?? DEFAULT_MAX_FEE_STROOPS;
  }

  private exclusive<T>(task: () => Promise<T>): Promise<T> {
    const run = this.queue.then(task, task);
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** The submission we made earlier for this very transfer (same call, same payer and nonce), if any. */
  private earlierSubmission(
    payload: PaymentPayload,
    req: PaymentRequirements,
  ): { id: string; base: SettlementBase } | undefined {
    const decoded = decodeStellarTransfer(payload, this.options.passphrase);
    if (!decoded.ok || checkTransferCall(decoded.transfer, req, this.facilitators)) return undefined;
    const auth = payerAuthorization(decoded.transfer);
    const id = auth ? `${auth.address}:${auth.nonce}` : '';
    return auth && this.submissions.has(id)
      ? { id, base: { network: req.network as Network, payer: auth.address } }
      : undefined;
  }

  /** Builds our transaction around the payer's entry, simulates and checks it, then assembles and signs it. */
  private async prepare(
    transfer: StellarTransfer,
    auth: PayerAuthorization,
    req: PaymentRequirements,
    deadline: number,
  ): Promise<{ ok: true; tx: Transaction } | ({ ok: false } & StellarFailure)> {
    try {
      const account = await this.server.getAccount(this.keypair.publicKey());
      const timeoutSeconds = Math.max(30, Math.ceil((deadline - Date.now()) / 1000));
      const tx = new TransactionBuilder(account, { fee: BASE_FEE, networkPassphrase: this.options.passphrase })
        .addOperation(Operation.invokeHostFunction({ func: transfer.op.func, auth: [auth.entry] }))
        .setTimeout(timeoutSeconds)
        .build();
      const sim = await this.server.simulateTransaction(tx);
      const refused = checkSimulation(sim, transfer, req, this.maxFeeStroops());
      if (refused) return { ok: false, ...refused };
      const prepared = rpc.assembleTransaction(tx, sim as rpc.Api.SimulateTransactionSuccessResponse).build();
      prepared.sign(this.keypair);
      return { ok: true, tx: prepared };
    } catch (err) {
      return refusal(
        'settle_exact_stellar_rpc_unavailable',
        `The Stellar RPC failed before anything was submitted: ${(err as Error).message}`,
      );
    }
  }

  /**
   * Submits the settlement (one at a time per account), then waits for its outcome; a bad sequence number is
   * retried with a fresh transaction, twice at most.
   */
  private async submit(
    transfer: StellarTransfer,
    auth: PayerAuthorization,
    req: PaymentRequirements,
    deadline: number,
  ): Promise<SettleResponse> {
    const base: SettlementBase = { network: req.network as Network, payer: auth.address };
    const failed = (errorReason: string, errorMessage: string): SettleResponse => ({
      success: false,
      errorReason,
      errorMessage,
      transaction: '',
      ...base,
    });
    const id = `${auth.address}:${auth.nonce}`;
    const earlier = await this.submissions.previous(id, deadline, base);
    if (earlier) return earlier;
    for (let attempt = 1; ; attempt++) {
      const prepared = await this.prepare(transfer, auth, req, deadline);
      if (!prepared.ok) return failed(prepared.reason, prepared.message);
      // From here on the transaction may reach the network: only the chain can tell what became of it.
      const hash = this.submissions.record(id, prepared.tx);
      let sent: rpc.Api.SendTransactionResponse;
      try {
        sent = await this.server.sendTransaction(prepared.tx);
      } catch {
        return this.submissions.confirm(id, hash, deadline, base, prepared.tx);
      }
      switch (sent.status) {
        case 'PENDING':
        case 'DUPLICATE':
          this.submissions.acknowledge(id);
          return this.submissions.confirm(id, hash, deadline, base);
        case 'TRY_AGAIN_LATER':
          this.submissions.forget(id);
          return failed(
            'settle_exact_stellar_transaction_submission_failed',
            'The network asked to try again later; nothing was submitted.',
          );
        case 'ERROR': {
          const code = sent.errorResult?.result().switch().name ?? 'unknown';
          this.submissions.forget(id);
          if (code === 'txBadSeq' && attempt < 3) continue;
          return failed(
            'settle_exact_stellar_transaction_submission_failed',
            `The network refused the settlement transaction (${code}).`,
          );
        }
      }
    }
  }
}
