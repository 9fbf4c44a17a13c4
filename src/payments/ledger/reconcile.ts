import type { PaymentPayload, PaymentRequirements, SettleResponse } from '@x402/core/types';
import type { Config } from '../../config/config.js';
import type { Logger } from '../../shared/log.js';
import { EVERY_CLAIM, type PaymentLedger, type PendingRecord, type ReceiptRecord } from '../../store/ledger.js';
import { canonicalNetworkId } from '../reading/match.js';
import { RAILS, railFor } from '../rails/index.js';
import type { LookupResult, Rail } from '../rails/rail.js';
import type { BatchChannels } from '../../store/channels.js';
import { batchOperationKind, channelVerdict, isChannelKey, receiptKindOf } from '../batch/kinds.js';

/** What reconciling one pending settlement came to; `pending` says why the chain could not decide, when known. */
export type Reconciled =
  | { type: 'settled'; receipt: SettleResponse }
  | { type: 'failed'; receipt: SettleResponse }
  | { type: 'pending'; reason?: string };

/** Submits a verified payment's settlement again (safe: every rail's payment is single-use on its chain). */
export type Resettle = (payload: PaymentPayload, requirements: PaymentRequirements) => Promise<SettleResponse>;

/** At most this many in-doubt claims are named in the one line a pass logs about them. */
const NAMED_IN_DOUBT = 20;

/** One claim still in doubt after a pass, as the pass's log line names it. */
interface InDoubt {
  key: string;
  tool: string;
  state: 'pending' | 'claimed';
  ageSeconds: number;
  reason: string;
}

/**
 * Finishes settlements whose outcome was unknown, at start-up, every pass of the upkeep and when the payment comes
 * back: asks the chain (the rail's `lookup`); if the chain has not seen it, submits the settlement again — the
 * chain itself makes the payment single-use, so a second submission can never charge twice — and asks again if that
 * fails. A settlement is recorded only with the transaction that made it: one the chain cannot name stays in doubt.
 */
export class Reconciler {
  constructor(
    private readonly config: Config,
    private readonly ledger: PaymentLedger,
    private readonly log: Logger,
    private readonly resettle: Resettle,
    private readonly rails: readonly Rail[] = RAILS,
    /** The seller's batch-settlement channels: what decides a voucher's claim (BATCH_SETTLEMENT=on). */
    private readonly channels?: BatchChannels,
    /** Whether the process named as a voucher claim's or reservation's holder is known to be gone (batch/owner.ts). */
    private readonly gone: (holder: string | undefined) => boolean = () => false,
  ) {}

  /** Asks the chain about one pending settlement and records a definite answer (settled or failed). */
  async reconcile(pending: PendingRecord): Promise<Reconciled> {
    // The claim loop's own claims, settles and refunds are closed by its next round (they are never sent again here).
    if (batchOperationKind(pending.replayKey))
      return { type: 'pending', reason: 'a batch-settlement operation: the next claim round of its network closes it' };
    let answer = await this.lookup(pending);
    if (answer.type === 'pending') {
      const again = await this.settleAgain(pending);
      if (again?.success && again.transaction) answer = { type: 'settled', transaction: again.transaction };
      else if (again)
        answer = await this.lookup(again.transaction ? { ...pending, transaction: again.transaction } : pending);
    }
    switch (answer.type) {
      case 'pending':
        return { type: 'pending', reason: answer.reason ?? 'the chain has no answer yet' };
      case 'settled': {
        await this.ledger.completePayment(this.record(pending, 'settled', answer.transaction));
        this.log.info('pending settlement confirmed on chain', {
          key: pending.replayKey,
          tool: pending.tool,
          transaction: answer.transaction,
        });
        return { type: 'settled', receipt: this.receipt(pending, true, answer.transaction) };
      }
      case 'failed': {
        const record = { ...this.record(pending, 'failed', pending.transaction), errorReason: answer.reason };
        await this.ledger.releasePending(record);
        this.log.warn('pending settlement did not happen on chain; the claim is released', {
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

  /** The rail's answer; a settlement it cannot name the transaction of is still in doubt, never settled. */
  private async lookup(pending: PendingRecord): Promise<LookupResult> {
    const answer = await this.askRail(pending);
    if (answer.type === 'settled' && !answer.transaction)
      return { type: 'pending', reason: 'the chain shows the payment used, but not the transaction that used it' };
    return answer;
  }

  private async askRail(pending: PendingRecord): Promise<LookupResult> {
    const requirements = pending.requirements as PaymentRequirements;
    const network = canonicalNetworkId(requirements.network);
    const net = this.config.networks.find((n) => n.id === network);
    const rail = net ? railFor(requirements, net, this.rails) : undefined;
    if (!net || !rail) return { type: 'pending', reason: `no configured rail settles on ${requirements.network}` };
    try {
      const { lookup } = await rail.sdk();
      if (!lookup) return { type: 'pending', reason: `the ${rail.id} rail cannot look payments up on chain` };
      return await lookup(
        {
          replayKey: pending.replayKey,
          payload: pending.payload as PaymentPayload,
          requirements,
          transaction: pending.transaction,
          claimedAt: pending.createdAt,
        },
        net,
        this.config,
      );
    } catch (err) {
      return { type: 'pending', reason: `the chain lookup failed: ${(err as Error).message.split('\n')[0]}` };
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
   * Ends a claim whose call never ended (its process stopped mid-call) once the chain decides it: it never
   * settles, since whether the handler succeeded is unknown. Paid on chain → the receipt is recorded with the
   * transaction that paid (whether the caller got its answer is unknown); provably never payable (expired unused,
   * cancelled) → released with a failed receipt; otherwise left, in doubt, for the next pass.
   */
  async reconcileStale(claim: PendingRecord): Promise<Reconciled> {
    const voucher = this.channels && isChannelKey(claim.replayKey);
    const answer = voucher
      ? await channelVerdict(this.channels!, claim.payload as PaymentPayload, this.gone)
      : await this.lookup(claim);
    switch (answer.type) {
      case 'pending':
        return { type: 'pending', reason: answer.reason ?? 'the chain has no answer yet' };
      case 'settled':
        await this.ledger.completePayment(this.record(claim, 'settled', answer.transaction));
        this.log.warn(
          'a claim left by a stopped process was paid on chain; its receipt is recorded with the transaction, whether its answer reached the caller is unknown',
          { key: claim.replayKey, tool: claim.tool, payer: claim.payer, transaction: answer.transaction },
        );
        return { type: 'settled', receipt: this.receipt(claim, true, answer.transaction) };
      case 'failed':
        await this.ledger.releasePayment(claim.replayKey);
        await this.ledger.recordReceipt({
          ...this.record(claim, 'failed', ''),
          errorReason: `abandoned_call: ${answer.reason}`,
        });
        this.log.warn('a claim left by a stopped process was never paid on chain; the claim is released', {
          key: claim.replayKey,
          tool: claim.tool,
          reason: answer.reason,
        });
        return { type: 'failed', receipt: { ...this.receipt(claim, false, ''), errorReason: answer.reason } };
    }
  }

  /**
   * A voucher's claim found in flight when the same voucher comes again: if its holder is known to be gone (a process
   * on this machine that was killed), or it is older than a live call can be without holding its channel (the
   * facilitator's verify timeout plus one reservation lease, BATCH_RESERVATION_LEASE), a stopped process left it, and
   * its channel decides it now (as {@link reconcileStale}) rather than at a later pass; undefined when it is not such
   * a claim.
   */
  async abandonedVoucher(replayKey: string): Promise<Reconciled | undefined> {
    if (!this.channels || !isChannelKey(replayKey)) return undefined;
    const liveMs = this.config.facilitator.timeoutMs + this.config.batch.reservationLease * 1000;
    const claims = await this.ledger.listStaleClaims(EVERY_CLAIM);
    const claim = claims.find((c) => c.replayKey === replayKey && this.abandoned(c, Date.now() - liveMs));
    return claim && claim.payload !== undefined && claim.payload !== null ? this.reconcileStale(claim) : undefined;
  }

  /** A claim left by a stopped process: last touched before `before` (epoch ms), or a voucher's whose holder is gone. */
  private abandoned(claim: PendingRecord, before: number): boolean {
    if (Date.parse(claim.updatedAt) < before) return true;
    return !!this.channels && isChannelKey(claim.replayKey) && this.gone(claim.owner);
  }

  /**
   * Reconciles every pending settlement, and every claim abandoned before `staleBefore` (ISO time) or by a holder known
   * to be gone; returns how many ended each way, and logs once the ones still in doubt, with why.
   */
  async reconcileAll(staleBefore?: string): Promise<{ settled: number; failed: number; pending: number }> {
    const counts = { settled: 0, failed: 0, pending: 0 };
    const inDoubt: InDoubt[] = [];
    const note = (record: PendingRecord, state: InDoubt['state'], result: Reconciled) => {
      counts[result.type] += 1;
      if (result.type === 'pending') inDoubt.push(this.inDoubt(record, state, result.reason));
    };
    for (const pending of await this.ledger.listPending()) note(pending, 'pending', await this.reconcile(pending));
    // Claims touched before `staleBefore`, and voucher claims of a holder known to be gone however young.
    const claims = staleBefore ? await this.ledger.listStaleClaims(EVERY_CLAIM) : [];
    for (const claim of claims.filter((c) => this.abandoned(c, Date.parse(staleBefore!)))) {
      if (claim.payload === undefined || claim.payload === null) continue; // claimed by a release that kept no details
      note(claim, 'claimed', await this.reconcileStale(claim));
    }
    if (counts.settled + counts.failed > 0) this.log.info('reconciled pending settlements', counts);
    if (inDoubt.length > 0)
      this.log.warn('payments still in doubt: the chain could not decide them; they stay listed and are asked again', {
        count: inDoubt.length,
        claims: inDoubt.slice(0, NAMED_IN_DOUBT),
      });
    return counts;
  }

  private inDoubt(record: PendingRecord, state: InDoubt['state'], reason?: string): InDoubt {
    const ageSeconds = Math.max(0, Math.round((Date.now() - Date.parse(record.createdAt)) / 1000));
    return { key: record.replayKey, tool: record.tool, state, ageSeconds, reason: reason ?? 'unknown' };
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
      ...receiptKindOf(p.payload as PaymentPayload, p.requirements as PaymentRequirements),
      createdAt: new Date().toISOString(),
    };
  }

  private receipt(p: PendingRecord, success: boolean, transaction: string): SettleResponse {
    return { success, transaction, network: p.network as SettleResponse['network'], payer: p.payer, amount: p.amount };
  }
}
