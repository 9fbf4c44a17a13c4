/**
 * One claim round of the seller's batch-settlement channels on one (network, token), through the official
 * `BatchSettlementChannelManager`: claim the charged vouchers (channels whose payer started a timed withdrawal
 * first) when the interval is due, the unclaimed value passed the threshold or a withdrawal is pending; refund
 * channels idle too long (their outstanding charge is claimed in the same transaction); then `settle` what was
 * claimed to the pay-to. Each transaction is recorded in the ledger with its hash and kind; a failure is recorded
 * with our own reason (the facilitator's text goes to the operator's log only) and retried at the next round.
 */
import { randomUUID } from 'node:crypto';
import { computeChannelId } from '@x402/evm/batch-settlement/client';
import type { BatchSettlementChannelManager } from '@x402/evm/batch-settlement/server';
import type { BatchMetrics, BatchOperation } from '../../observe/metrics-batch.js';
import type { Logger } from '../../shared/log.js';
import type { ChannelRecord } from '../../store/channels.js';
import type { PaymentLedger, ReceiptRecord } from '../../store/ledger.js';

/** The manager's batch size (its default): vouchers per claim transaction. */
const CLAIMS_PER_BATCH = 100;

/** What a round works with. */
export interface ClaimRoundDeps {
  manager: BatchSettlementChannelManager;
  network: string;
  /** The token (lower case) and receiver (lower case) whose channels this round claims. */
  token: string;
  receiver: string;
  ledger: Pick<PaymentLedger, 'recordReceipt'>;
  log: Logger;
  metrics?: BatchMetrics;
}

/** When a round claims and refunds. */
export interface ClaimPolicy {
  /** The interval since the last claim has passed. */
  due: boolean;
  /** Unclaimed base units that make a claim due anyway. */
  threshold: bigint;
  /** Seconds since a channel's last request after which it is refunded. */
  refundIdleSecs: number;
  now: number;
}

/** What a round did. */
export interface RoundOutcome {
  claimed: bigint;
  claimTransactions: string[];
  refunded: string[];
  settleTransaction?: string;
  failures: BatchOperation[];
}

const unclaimedOf = (c: ChannelRecord): bigint => BigInt(c.chargedCumulativeAmount) - BigInt(c.totalClaimed);
const live = (c: ChannelRecord, now: number): boolean => !!c.pendingRequest && c.pendingRequest.expiresAt > now;

/** The claim rounds of one (network, token); remembers claimed value not settled yet between rounds. */
export class ClaimRound {
  /** Claimed and not yet settled (this process's knowledge: a restart settles at its next claim). */
  private owed = 0n;

  constructor(private readonly deps: ClaimRoundDeps) {}

  /** Sets the sink the round reports its operations to. */
  set metrics(metrics: BatchMetrics) {
    this.deps.metrics = metrics;
  }

  /** This round's channels: of our receiver and token, with an id computed on this network. */
  mine(channels: readonly ChannelRecord[]): ChannelRecord[] {
    const { network, token, receiver } = this.deps;
    return channels.filter(
      (c) =>
        c.channelConfig.token.toLowerCase() === token &&
        c.channelConfig.receiver.toLowerCase() === receiver &&
        computeChannelId(c.channelConfig, network as `${string}:${string}`).toLowerCase() === c.channelId.toLowerCase(),
    );
  }

  /** Runs one round over the channels as `list` reads them from the store. */
  async run(list: () => Promise<ChannelRecord[]>, policy: ClaimPolicy): Promise<RoundOutcome> {
    const out: RoundOutcome = { claimed: 0n, claimTransactions: [], refunded: [], failures: [] };
    let mine = this.mine(await list());
    const withdrawing = mine.filter((c) => c.withdrawRequestedAt > 0 && unclaimedOf(c) > 0n);
    const unclaimed = mine.reduce((sum, c) => sum + (unclaimedOf(c) > 0n ? unclaimedOf(c) : 0n), 0n);
    if (unclaimed > 0n && (policy.due || unclaimed >= policy.threshold || withdrawing.length > 0)) {
      await this.claim([...withdrawing, ...mine.filter((c) => !withdrawing.includes(c))], out);
      mine = this.mine(await list());
    }
    const idleMs = policy.refundIdleSecs * 1000;
    const idle = mine.filter(
      (c) =>
        BigInt(c.balance) > BigInt(c.chargedCumulativeAmount) &&
        !live(c, policy.now) &&
        policy.now - c.lastRequestTimestamp >= idleMs,
    );
    for (const channel of idle) await this.refund(channel, out);
    if (this.owed > 0n) await this.settle(out);
    return out;
  }

  /** Claims every charged voucher of `ordered` in batches; records one receipt per batch transaction. */
  private async claim(ordered: ChannelRecord[], out: RoundOutcome): Promise<void> {
    const claimable = ordered.filter((c) => unclaimedOf(c) > 0n);
    const ids = new Set(claimable.map((c) => c.channelId.toLowerCase()));
    const started = performance.now();
    try {
      const results = await this.deps.manager.claim({
        maxClaimsPerBatch: CLAIMS_PER_BATCH,
        // The manager lists every stored channel: keep ours, in our order (withdrawals first).
        selectClaimChannels: (stored) => {
          const byId = new Map(stored.map((c) => [c.channelId.toLowerCase(), c]));
          return claimable.map((c) => byId.get(c.channelId.toLowerCase())).filter((c) => c !== undefined);
        },
      });
      this.observe('claim', started, true);
      for (const [i, result] of results.entries()) {
        const batch = claimable.slice(i * CLAIMS_PER_BATCH, (i + 1) * CLAIMS_PER_BATCH);
        const amount = batch.reduce((sum, c) => sum + unclaimedOf(c), 0n);
        this.owed += amount;
        out.claimed += amount;
        out.claimTransactions.push(result.transaction);
        await this.record('claim', { amount, transaction: result.transaction, vouchers: result.vouchers });
      }
    } catch (err) {
      this.observe('claim', started, false);
      out.failures.push('claim');
      const amount = claimable.reduce((sum, c) => sum + unclaimedOf(c), 0n);
      this.deps.log.warn('batch-settlement claim failed; retried at the next round', {
        network: this.deps.network,
        channels: ids.size,
        error: String((err as Error)?.message ?? err),
      });
      await this.record('claim', { amount, failed: true });
    }
  }

  /** Refunds one idle channel (claiming its outstanding charge in the same transaction). */
  private async refund(channel: ChannelRecord, out: RoundOutcome): Promise<void> {
    const amount = BigInt(channel.balance) - BigInt(channel.chargedCumulativeAmount);
    const started = performance.now();
    try {
      const [result] = await this.deps.manager.refund([channel.channelId]);
      this.observe('refund', started, true);
      if (!result) return; // a call took the channel meanwhile: it is no longer idle
      this.owed += unclaimedOf(channel) > 0n ? unclaimedOf(channel) : 0n;
      out.refunded.push(result.transaction);
      await this.record('refund', { amount, transaction: result.transaction, channel });
    } catch (err) {
      this.observe('refund', started, false);
      out.failures.push('refund');
      this.deps.log.warn('batch-settlement refund failed; retried at the next round', {
        network: this.deps.network,
        channel: channel.channelId,
        error: String((err as Error)?.message ?? err),
      });
      await this.record('refund', { amount, channel, failed: true });
    }
  }

  /** Moves the claimed value to the pay-to. */
  private async settle(out: RoundOutcome): Promise<void> {
    const amount = this.owed;
    const started = performance.now();
    try {
      const { transaction } = await this.deps.manager.settle();
      this.observe('settle', started, true);
      this.owed -= amount;
      out.settleTransaction = transaction;
      await this.record('settle', { amount, transaction });
    } catch (err) {
      this.observe('settle', started, false);
      out.failures.push('settle');
      this.deps.log.warn('batch-settlement settle failed; retried at the next round', {
        network: this.deps.network,
        error: String((err as Error)?.message ?? err),
      });
      await this.record('settle', { amount, failed: true });
    }
  }

  private observe(op: BatchOperation, started: number, ok: boolean): void {
    this.deps.metrics?.operation(op, this.deps.network, (performance.now() - started) / 1000, ok);
  }

  /** Writes the receipt of one operation (a failure with our reason, never the facilitator's text); logs if it cannot. */
  private async record(
    kind: BatchOperation,
    op: { amount: bigint; transaction?: string; vouchers?: number; channel?: ChannelRecord; failed?: boolean },
  ): Promise<void> {
    const receipt: ReceiptRecord = {
      replayKey: `batch:${kind}:${op.transaction ?? randomUUID()}`,
      tool: 'batch-settlement',
      network: this.deps.network,
      payer: op.channel?.channelConfig.payer ?? this.deps.receiver,
      amount: op.amount.toString(),
      transaction: op.transaction ?? '',
      status: op.failed ? 'failed' : 'settled',
      ...(op.failed ? { errorReason: `${kind}_failed` } : {}),
      transport: 'http',
      kind,
      ...(op.channel ? { channelId: op.channel.channelId, cumulativeAmount: op.channel.chargedCumulativeAmount } : {}),
      createdAt: new Date().toISOString(),
    };
    await this.deps.ledger.recordReceipt(receipt).catch((err: unknown) =>
      this.deps.log.error('recording a batch-settlement receipt failed', {
        kind,
        transaction: receipt.transaction,
        error: String((err as Error)?.message ?? err),
      }),
    );
  }
}
