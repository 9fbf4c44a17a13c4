import { BASE_FEE, Keypair, Operation, rpc, TransactionBuilder, type Transaction } from '@stellar/stellar-sdk';
import type {
  Network,
  PaymentPayload,
  PaymentRequirements,
  SchemeNetworkFacilitator,
  SettleResponse,
  VerifyResponse,
} from '@x402/core/types';
import {
  checkAuthorization,
  checkTransferCall,
  checkTransferEvents,
  decodeStellarTransfer,
  payerAuthorization,
  type PayerAuthorization,
  type StellarFailure,
  type StellarTransfer,
} from './checks.js';
import { stellarRpc } from './network.js';

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
  /**
   * Our submissions that may still land, by payer + nonce: settling the same authorization again (the x402 core
   * retries a pending settlement once, the reconciler retries later) waits for that transaction instead of
   * submitting a second one, so the receipt always names the transaction that carries the payment.
   */
  private readonly submitted = new Map<
    string,
    { hash: string; maxTime: number; envelope: Transaction; acknowledged: boolean }
  >();

  constructor(private readonly options: StellarFacilitatorOptions) {
    this.keypair = Keypair.fromSecret(options.secret);
    this.server = stellarRpc(options.rpcUrl, options.rpcTimeoutMs);
    this.facilitators = new Set([this.keypair.publicKey()]);
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
    const refused = this.checkSimulation(sim, checked.transfer, requirements);
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
      const outcome = await this.exclusive(() => this.previous(earlier.id, deadline, earlier.base));
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

  private checkSimulation(
    sim: rpc.Api.SimulateTransactionResponse,
    transfer: StellarTransfer,
    req: PaymentRequirements,
  ): StellarFailure | undefined {
    if (!rpc.Api.isSimulationSuccess(sim)) {
      const error = rpc.Api.isSimulationError(sim) ? sim.error : 'unknown simulation result';
      return {
        reason: 'invalid_exact_stellar_payload_simulation_failed',
        message: `The network refuses the transfer: ${error.split('\n')[0]}`,
      };
    }
    if (rpc.Api.isSimulationRestore(sim)) {
      return {
        reason: 'invalid_exact_stellar_payload_simulation_failed',
        message: 'The transfer touches archived ledger entries; restore them first.',
      };
    }
    const events = checkTransferEvents(sim.events, transfer, req);
    if (events) return events;
    const max = BigInt(this.options.maxFeeStroops ?? DEFAULT_MAX_FEE_STROOPS);
    if (BigInt(sim.minResourceFee) + BigInt(BASE_FEE) > max) {
      return {
        reason: 'invalid_exact_stellar_payload_fee_exceeds_maximum',
        message: `Settling would cost ${sim.minResourceFee} stroops of resource fees; at most ${max} in total is sponsored.`,
      };
    }
    return undefined;
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
  ): { id: string; base: { network: Network; payer: string } } | undefined {
    const decoded = decodeStellarTransfer(payload, this.options.passphrase);
    if (!decoded.ok || checkTransferCall(decoded.transfer, req, this.facilitators)) return undefined;
    const auth = payerAuthorization(decoded.transfer);
    const id = auth ? `${auth.address}:${auth.nonce}` : '';
    return auth && this.submitted.has(id)
      ? { id, base: { network: req.network as Network, payer: auth.address } }
      : undefined;
  }

  /** A previous submission of this authorization that may still land: its outcome, or undefined to submit afresh. */
  private async previous(
    id: string,
    deadline: number,
    base: { network: Network; payer: string },
  ): Promise<SettleResponse | undefined> {
    const now = Date.now() / 1000;
    for (const [key, entry] of this.submitted) if (entry.maxTime < now - 3600) this.submitted.delete(key);
    const prior = this.submitted.get(id);
    if (!prior) return undefined;
    const status = await this.server.getTransaction(prior.hash).then(
      (r) => r.status,
      () => undefined,
    );
    const dead =
      status === rpc.Api.GetTransactionStatus.FAILED ||
      (status === rpc.Api.GetTransactionStatus.NOT_FOUND && now > prior.maxTime + 30);
    if (dead) {
      this.submitted.delete(id);
      return undefined;
    }
    // A submission the network never acknowledged is made again with the same signed envelope (same hash: it lands once at most).
    return this.confirm(id, prior.hash, deadline, base, prior.acknowledged ? undefined : prior.envelope);
  }

  private async submit(
    transfer: StellarTransfer,
    auth: PayerAuthorization,
    req: PaymentRequirements,
    deadline: number,
  ): Promise<SettleResponse> {
    const base = { network: req.network as Network, payer: auth.address };
    const failed = (errorReason: string, errorMessage: string, transaction = ''): SettleResponse => ({
      success: false,
      errorReason,
      errorMessage,
      transaction,
      ...base,
    });
    const id = `${auth.address}:${auth.nonce}`;
    const earlier = await this.previous(id, deadline, base);
    if (earlier) return earlier;
    for (let attempt = 1; ; attempt++) {
      let prepared: Transaction;
      try {
        const account = await this.server.getAccount(this.keypair.publicKey());
        const timeoutSeconds = Math.max(30, Math.ceil((deadline - Date.now()) / 1000));
        const tx = new TransactionBuilder(account, { fee: BASE_FEE, networkPassphrase: this.options.passphrase })
          .addOperation(Operation.invokeHostFunction({ func: transfer.op.func, auth: [auth.entry] }))
          .setTimeout(timeoutSeconds)
          .build();
        const sim = await this.server.simulateTransaction(tx);
        const refused = this.checkSimulation(sim, transfer, req);
        if (refused) return failed(refused.reason, refused.message);
        prepared = rpc.assembleTransaction(tx, sim as rpc.Api.SimulateTransactionSuccessResponse).build();
        prepared.sign(this.keypair);
      } catch (err) {
        return failed(
          'settle_exact_stellar_rpc_unavailable',
          `The Stellar RPC failed before anything was submitted: ${(err as Error).message}`,
        );
      }
      const hash = prepared.hash().toString('hex');
      // From here on the transaction may reach the network: only the chain can tell what became of it.
      this.submitted.set(id, {
        hash,
        maxTime: Number(prepared.timeBounds?.maxTime ?? 0),
        envelope: prepared,
        acknowledged: false,
      });
      let sent: rpc.Api.SendTransactionResponse;
      try {
        sent = await this.server.sendTransaction(prepared);
      } catch {
        return this.confirm(id, hash, deadline, base, prepared);
      }
      switch (sent.status) {
        case 'PENDING':
        case 'DUPLICATE':
          this.acknowledge(id);
          return this.confirm(id, hash, deadline, base);
        case 'TRY_AGAIN_LATER':
          this.submitted.delete(id);
          return failed(
            'settle_exact_stellar_transaction_submission_failed',
            'The network asked to try again later; nothing was submitted.',
          );
        case 'ERROR': {
          const code = sent.errorResult?.result().switch().name ?? 'unknown';
          this.submitted.delete(id);
          if (code === 'txBadSeq' && attempt < 3) continue;
          return failed(
            'settle_exact_stellar_transaction_submission_failed',
            `The network refused the settlement transaction (${code}); nothing was charged.`,
          );
        }
      }
    }
  }

  /**
   * Waits for the transaction's result until the deadline. `resend` is its signed envelope when no submission of it was
   * acknowledged yet: it is submitted again on each round until the network answers PENDING or DUPLICATE (the same
   * hash: it can land once at most).
   */
  private acknowledge(id: string): void {
    const entry = this.submitted.get(id);
    if (entry) entry.acknowledged = true;
  }

  private async confirm(
    id: string,
    hash: string,
    deadline: number,
    base: { network: Network; payer: string },
    resend?: Transaction,
  ): Promise<SettleResponse> {
    const interval = this.options.pollIntervalMs ?? 1000;
    let unacknowledged = resend;
    for (;;) {
      if (unacknowledged) {
        const answer = await this.server.sendTransaction(unacknowledged).then(
          (r) => r.status,
          () => undefined,
        );
        if (answer === 'PENDING' || answer === 'DUPLICATE') {
          unacknowledged = undefined;
          this.acknowledge(id);
        }
      }
      try {
        const result = await this.server.getTransaction(hash);
        if (result.status === rpc.Api.GetTransactionStatus.SUCCESS) {
          this.submitted.delete(id);
          return { success: true, transaction: hash, ...base };
        }
        if (result.status === rpc.Api.GetTransactionStatus.FAILED) {
          this.submitted.delete(id);
          const code = result.resultXdr.result().switch().name;
          return {
            success: false,
            errorReason: 'settle_exact_stellar_transaction_failed',
            errorMessage: `The settlement transaction failed on chain (${code}); nothing was charged.`,
            transaction: hash,
            ...base,
          };
        }
      } catch {
        // An unreachable RPC is no answer: keep asking until the deadline.
      }
      if (Date.now() + interval > deadline) {
        return {
          success: false,
          errorReason: 'settlement_pending',
          errorMessage: `Transaction ${hash} was submitted; its outcome is not known yet.`,
          transaction: hash,
          ...base,
        };
      }
      await new Promise((resolve) => setTimeout(resolve, interval));
    }
  }
}
