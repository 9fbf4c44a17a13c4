/**
 * Our Stellar settlement transactions that may still land, by payer + nonce, and how to learn what became of them:
 * settling the same authorization again (the x402 core retries a pending settlement once, the reconciler retries
 * later) waits for that transaction instead of submitting a second one, so the receipt always names the transaction
 * that carries the payment.
 */
import { rpc, type Transaction } from '@stellar/stellar-sdk';
import type { Network, SettleResponse } from '@x402/core/types';

/** The network and payer every settle answer repeats. */
export interface SettlementBase {
  network: Network;
  payer: string;
}

interface Submission {
  hash: string;
  maxTime: number;
  envelope: Transaction;
  acknowledged: boolean;
}

/** The submissions of one settlement account that may still land, and the polling that learns their outcome. */
export class StellarSubmissions {
  private readonly submitted = new Map<string, Submission>();

  constructor(
    private readonly server: rpc.Server,
    private readonly pollIntervalMs: number,
  ) {}

  /** Whether a submission of this authorization (payer + nonce) may still land. */
  has(id: string): boolean {
    return this.submitted.has(id);
  }

  /** Records a signed transaction that is about to reach the network; returns its hash. */
  record(id: string, prepared: Transaction): string {
    const hash = prepared.hash().toString('hex');
    this.submitted.set(id, {
      hash,
      maxTime: Number(prepared.timeBounds?.maxTime ?? 0),
      envelope: prepared,
      acknowledged: false,
    });
    return hash;
  }

  /** Forgets a submission the network refused: it cannot land. */
  forget(id: string): void {
    this.submitted.delete(id);
  }

  /** Marks a submission as acknowledged by the network (PENDING or DUPLICATE). */
  acknowledge(id: string): void {
    const entry = this.submitted.get(id);
    if (entry) entry.acknowledged = true;
  }

  /** A previous submission of this authorization that may still land: its outcome, or undefined to submit afresh. */
  async previous(id: string, deadline: number, base: SettlementBase): Promise<SettleResponse | undefined> {
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

  /**
   * Waits for the transaction's result until the deadline. `resend` is its signed envelope when no submission of it was
   * acknowledged yet: it is submitted again on each round until the network answers PENDING or DUPLICATE (the same
   * hash: it can land once at most).
   */
  async confirm(
    id: string,
    hash: string,
    deadline: number,
    base: SettlementBase,
    resend?: Transaction,
  ): Promise<SettleResponse> {
    const interval = this.pollIntervalMs;
    let unacknowledged = resend;
    for (;;) {
      if (unacknowledged && (await this.resend(id, unacknowledged))) unacknowledged = undefined;
      const outcome = await this.outcome(id, hash, base);
      if (outcome) return outcome;
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

  /** Submits an unacknowledged envelope again; true once the network acknowledges it. */
  private async resend(id: string, envelope: Transaction): Promise<boolean> {
    const answer = await this.server.sendTransaction(envelope).then(
      (r) => r.status,
      () => undefined,
    );
    if (answer !== 'PENDING' && answer !== 'DUPLICATE') return false;
    this.acknowledge(id);
    return true;
  }

  /** The transaction's final outcome (landed or failed on chain), or undefined while it is not known. */
  private async outcome(id: string, hash: string, base: SettlementBase): Promise<SettleResponse | undefined> {
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
          errorMessage: `The settlement transaction failed on chain (${code}).`,
          transaction: hash,
          ...base,
        };
      }
    } catch {
      // An unreachable RPC is no answer: keep asking until the deadline.
    }
    return undefined;
  }
}
