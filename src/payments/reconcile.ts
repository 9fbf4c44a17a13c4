import type { PaymentPayload, PaymentRequirements, SettleResponse } from '@x402/core/types';
import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import type { PaymentLedger, PendingRecord, ReceiptRecord } from '../store/ledger.js';
import { canonicalNetworkId } from './match.js';
import { RAILS, railFor } from './rails/index.js';
import type { LookupResult, Rail } from './rails/rail.js';

/** What reconciling one pending settlement came to. */
export type Reconciled =
  { type: 'settled'; receipt: SettleResponse } | { type: 'failed'; receipt: SettleResponse } | { type: 'pending' };

/** Submits a verified payment's settlement again (safe: every rail's payment is single-use on its chain). */
export type Resettle = (payload: PaymentPayload, requirements: PaymentRequirements) => Promise<SettleResponse>;

/**
 * Finishes settlements whose outcome was unknown, at start-up and when the payment comes back: asks the chain
 * (the rail's `lookup`); if the chain has not seen it, submits the settlement again — the chain itself makes the
 * payment single-use, so a second submission can never charge twice — and asks again if that fails.
 */
export class Reconciler {
  constructor(
    private readonly config: Config,
    private readonly ledger: PaymentLedger,
    private readonly log: Logger,
    private readonly resettle: Resettle,
    private readonly rails: readonly Rail[] = RAILS,
  ) {}

  /** Asks the chain about one pending settlement and records a definite answer (settled or failed). */
  async reconcile(pending: PendingRecord): Promise<Reconciled> {
    let answer = await this.lookup(pending);
    if (answer.type === 'pending') {
      const again = await this.settleAgain(pending);
      if (again?.success) answer = { type: 'settled', transaction: again.transaction };
      else if (again)
        answer = await this.lookup(again.transaction ? { ...pending, transaction: again.transaction } : pending);
    }
    switch (answer.type) {
      case 'pending':
        return { type: 'pending' };
      case 'settled': {
        const record = this.record(pending, 'settled', answer.transaction);
        await this.ledger.completePayment(record);
        this.log.info('pending settlement confirmed', {
          key: pending.replayKey,
          tool: pending.tool,
          transaction: answer.transaction,
        });
        return { type: 'settled', receipt: this.receipt(pending, true, answer.transaction) };
      }
      case 'failed': {
        const record = { ...this.record(pending, 'failed', pending.transaction), errorReason: answer.reason };
        await this.ledger.releasePending(record);
        this.log.warn('pending settlement did not happen; the claim is released', {
          key: pending.replayKey,
          tool: pending.tool,
          reason: answer.reason,
        });
        return {
          type: 'failed',
          receipt: { ...this.receipt(pending, false, pending.transaction), errorReason: answer.reason },
        };
      }
    }
  }

  private async lookup(pending: PendingRecord): Promise<LookupResult> {
    const requirements = pending.requirements as PaymentRequirements;
    const network = canonicalNetworkId(requirements.network);
    const net = this.config.networks.find((n) => n.id === network);
    const rail = net ? railFor(requirements, net, this.rails) : undefined;
    if (!net || !rail) return { type: 'pending' };
    try {
      const { lookup } = await rail.sdk();
      if (!lookup) return { type: 'pending' };
      return await lookup(
        {
          replayKey: pending.replayKey,
          payload: pending.payload as PaymentPayload,
          requirements,
          transaction: pending.transaction,
        },
        net,
        this.config,
      );
    } catch (err) {
      this.log.warn('could not look up a pending settlement', {
        key: pending.replayKey,
        network: pending.network,
        error: (err as Error).message,
      });
      return { type: 'pending' };
    }
  }

  private async settleAgain(pending: PendingRecord): Promise<SettleResponse | undefined> {
    try {
      return await this.resettle(pending.payload as PaymentPayload, pending.requirements as PaymentRequirements);
    } catch (err) {
      this.log.warn('re-submitting a pending settlement failed', {
        key: pending.replayKey,
        error: (err as Error).message,
      });
      return undefined;
    }
  }

  /**
   * Ends a claim whose call never ended (its process stopped mid-call) once nothing can settle it any more:
   * asks the chain only — it never settles, since whether the handler succeeded is unknown. Settled on chain →
   * the receipt is recorded (the output is lost, and logged as such); provably unused → released with a failed
   * receipt; otherwise left for the next round.
   */
  async reconcileStale(claim: PendingRecord): Promise<Reconciled> {
    const answer = await this.lookup(claim);
    switch (answer.type) {
      case 'pending':
        return { type: 'pending' };
      case 'settled':
        await this.ledger.completePayment(this.record(claim, 'settled', answer.transaction));
        this.log.error('a call stopped mid-way was paid on chain; its receipt is recorded, its output was lost', {
          key: claim.replayKey,
          tool: claim.tool,
          payer: claim.payer,
          transaction: answer.transaction,
        });
        return { type: 'settled', receipt: this.receipt(claim, true, answer.transaction) };
      case 'failed':
        await this.ledger.releasePayment(claim.replayKey);
        await this.ledger.recordReceipt({
          ...this.record(claim, 'failed', ''),
          errorReason: `abandoned_call: ${answer.reason}`,
        });
        this.log.warn('a call stopped mid-way was never paid; its claim is released', {
          key: claim.replayKey,
          tool: claim.tool,
          reason: answer.reason,
        });
        return { type: 'failed', receipt: { ...this.receipt(claim, false, ''), errorReason: answer.reason } };
    }
  }

  /**
   * Reconciles every pending settlement, and every claim abandoned before `staleBefore` (ISO time); returns how
   * many ended each way.
   */
  async reconcileAll(staleBefore?: string): Promise<{ settled: number; failed: number; pending: number }> {
    const counts = { settled: 0, failed: 0, pending: 0 };
    for (const pending of await this.ledger.listPending()) {
      const result = await this.reconcile(pending);
      counts[result.type] += 1;
    }
    for (const claim of staleBefore ? await this.ledger.listStaleClaims(staleBefore) : []) {
      if (claim.payload === undefined || claim.payload === null) continue; // claimed by a release that kept no details
      const result = await this.reconcileStale(claim);
      counts[result.type] += 1;
    }
    if (counts.settled + counts.failed + counts.pending > 0) this.log.info('reconciled pending settlements', counts);
    return counts;
  }

  private record(p: PendingRecord, status: ReceiptRecord['status'], transaction: string): ReceiptRecord {
    return {
      replayKey: p.replayKey,
      tool: p.tool,
      network: p.network,
      payer: p.payer,
      amount: p.amount,
      transaction,
      status,
      transport: p.transport,
      protocol: p.protocol ?? 'x402',
      createdAt: new Date().toISOString(),
    };
  }

  private receipt(p: PendingRecord, success: boolean, transaction: string): SettleResponse {
    return { success, transaction, network: p.network as SettleResponse['network'], payer: p.payer, amount: p.amount };
  }
}
