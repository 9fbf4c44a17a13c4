/**
 * One claim round of the seller's batch-settlement channels on one (network, token), through the official
 * `BatchSettlementChannelManager`: claim the charged vouchers (channels whose payer started a timed withdrawal
 * first) when the interval is due, the unclaimed value passed the threshold or a withdrawal is pending; refund
 * channels idle too long (their outstanding charge is claimed in the same transaction); then `settle` what was
 * claimed to the pay-to. Each operation's row is written pending before the facilitator is asked, then becomes its
 * receipt with the transaction hash, or failed with our own reason (the facilitator's text goes to the operator's log
 * only) and retried at the next round; rows a stopped process left pending are closed by the next round (./op-ledger.ts).
 */
import type { FacilitatorClient } from '@x402/core/server';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { computeChannelId } from '@x402/evm/batch-settlement/client';
import type { BatchSettlementChannelManager } from '@x402/evm/batch-settlement/server';
import { getAddress } from 'viem';
import type { BatchMetrics, BatchOperation } from '../../observe/metrics-batch.js';
import type { Logger } from '../../shared/log.js';
import type { ChannelRecord } from '../../store/channels.js';
import { BATCH_SCHEME } from './kinds.js';
import type { LandedClaims } from './landed-claims.js';
import { type OperationLedger, OperationRows } from './op-ledger.js';

/** The manager's batch size (its default): vouchers per claim transaction. */
const CLAIMS_PER_BATCH = 100;
/** The facilitator's reason for a settle when everything claimed for the receiver and token was settled already. */
const NOTHING_TO_SETTLE = 'invalid_batch_settlement_evm_nothing_to_settle';

/** What a round works with. */
export interface ClaimRoundDeps {
  manager: BatchSettlementChannelManager;
  /** The manager's facilitator: the round asks it to settle itself, to learn the amount the chain settled. */
  facilitator: FacilitatorClient;
  network: string;
  /** The token (lower case) and receiver (lower case) whose channels this round claims. */
  token: string;
  receiver: string;
  ledger: OperationLedger;
  log: Logger;
  metrics?: BatchMetrics;
  /** The receiver's claims on chain (through the network's RPC, when it has one): names a claim a stopped process sent. */
  landed?: LandedClaims;
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
  /** Epoch ms before which a row still pending was left by a stopped process (older than the round lease). */
  abandonedBefore: number;
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
  private readonly rows: OperationRows;

  constructor(private readonly deps: ClaimRoundDeps) {
    const { network, token, receiver } = deps;
    this.rows = new OperationRows(deps.ledger, { network, token, receiver }, deps.log);
  }

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
    // Left by a stopped process: a settle's value is settled again, as is a claim's found on chain (the rest of a
    // claim's vouchers are claimed again below).
    for (const a of await this.rows.closeAbandoned(policy.abandonedBefore, this.deps.landed))
      if (a.kind === 'settle' || a.transaction) this.owed += a.amount;
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
    const batches: ChannelRecord[][] = [];
    for (let i = 0; i < claimable.length; i += CLAIMS_PER_BATCH) batches.push(claimable.slice(i, i + CLAIMS_PER_BATCH));
    const amounts = batches.map((batch) => batch.reduce((sum, c) => sum + unclaimedOf(c), 0n));
    const rows = [];
    for (const [i, amount] of amounts.entries()) {
      const claims = batches[i]!.map((c) => c.channelId.toLowerCase());
      rows.push(await this.rows.begin('claim', { amount, claims }));
    }
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
      for (const [i, row] of rows.entries()) {
        const result = results[i];
        // The manager found nothing more to claim in this batch (a call's commit raced the listing).
        if (!result) {
          await this.rows.failed(row, 'claim_nothing_to_claim');
          continue;
        }
        this.owed += amounts[i]!;
        out.claimed += amounts[i]!;
        out.claimTransactions.push(result.transaction);
        await this.rows.settled(row, result.transaction);
      }
    } catch (err) {
      this.observe('claim', started, false);
      out.failures.push('claim');
      this.deps.log.warn('batch-settlement claim failed; retried at the next round', {
        network: this.deps.network,
        channels: ids.size,
        error: String((err as Error)?.message ?? err),
      });
      for (const row of rows) await this.rows.failed(row, 'claim_failed');
    }
  }

  /** Refunds one idle channel (claiming its outstanding charge in the same transaction). */
  private async refund(channel: ChannelRecord, out: RoundOutcome): Promise<void> {
    const amount = BigInt(channel.balance) - BigInt(channel.chargedCumulativeAmount);
    const { channelId, channelConfig, chargedCumulativeAmount: cumulativeAmount } = channel;
    const row = await this.rows.begin('refund', {
      amount,
      channel: { channelId, payer: channelConfig.payer, cumulativeAmount },
    });
    const started = performance.now();
    try {
      const [result] = await this.deps.manager.refund([channel.channelId]);
      this.observe('refund', started, true);
      // A call took the channel meanwhile: it is no longer idle, nothing was sent.
      if (!result) return await this.rows.failed(row, 'refund_channel_busy');
      this.owed += unclaimedOf(channel) > 0n ? unclaimedOf(channel) : 0n;
      out.refunded.push(result.transaction);
      await this.rows.settled(row, result.transaction);
    } catch (err) {
      this.observe('refund', started, false);
      out.failures.push('refund');
      this.deps.log.warn('batch-settlement refund failed; retried at the next round', {
        network: this.deps.network,
        channel: channel.channelId,
        error: String((err as Error)?.message ?? err),
      });
      await this.rows.failed(row, 'refund_failed');
    }
  }

  /** Moves the claimed value to the pay-to. */
  private async settle(out: RoundOutcome): Promise<void> {
    const amount = this.owed;
    const row = await this.rows.begin('settle', { amount });
    const started = performance.now();
    try {
      const { transaction, swept } = await this.sweep();
      this.observe('settle', started, true);
      this.owed -= amount;
      out.settleTransaction = transaction;
      // The chain sweeps everything claimed, also what a claim whose answer was lost (its process stopped) claimed.
      if (swept !== undefined && swept !== amount)
        this.deps.log.warn('batch-settlement settle swept another amount than the claims recorded', {
          network: this.deps.network,
          recorded: amount.toString(),
          swept: swept.toString(),
        });
      await this.rows.settled({ ...row, amount: (swept ?? amount).toString() }, transaction);
    } catch (err) {
      this.observe('settle', started, false);
      if (String((err as Error)?.message).includes(NOTHING_TO_SETTLE)) {
        // Everything claimed is settled already (by a settle whose process stopped before recording it): none owed.
        this.owed -= amount;
        return await this.rows.failed(row, 'settle_nothing_to_settle');
      }
      out.failures.push('settle');
      this.deps.log.warn('batch-settlement settle failed; retried at the next round', {
        network: this.deps.network,
        error: String((err as Error)?.message ?? err),
      });
      await this.rows.failed(row, 'settle_failed');
    }
  }

  /**
   * `settle(receiver, token)` through the facilitator, as the manager's `settle()` asks it, keeping the amount the
   * facilitator read from the `Settled` event (undefined when it names none).
   */
  private async sweep(): Promise<{ transaction: string; swept?: bigint }> {
    const { network, facilitator } = this.deps;
    const [token, receiver] = [getAddress(this.deps.token), getAddress(this.deps.receiver)];
    const requirements: PaymentRequirements = {
      scheme: BATCH_SCHEME,
      network: network as PaymentRequirements['network'],
      asset: token,
      amount: '0',
      payTo: receiver,
      maxTimeoutSeconds: 0,
      extra: {},
    };
    const payload = { x402Version: 2, accepted: requirements, payload: { type: 'settle', receiver, token } };
    const response = await facilitator.settle(payload as PaymentPayload, requirements);
    if (!response.success)
      throw new Error(`Settle failed: ${response.errorReason ?? 'unknown'} — ${response.errorMessage ?? ''}`);
    return { transaction: response.transaction, ...(response.amount ? { swept: BigInt(response.amount) } : {}) };
  }

  private observe(op: BatchOperation, started: number, ok: boolean): void {
    this.deps.metrics?.operation(op, this.deps.network, (performance.now() - started) / 1000, ok);
  }
}
