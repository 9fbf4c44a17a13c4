/**
 * Cooperative refunds of the agent's batch-settlement channels: the official client scheme signs the refund payload
 * and sends it to the seller (at the URL the channel last paid); what the channel still had goes back to the wallet,
 * and what the budget still counted as committed is given back. `tollbooth deposits --refund` and idle channels
 * (AGENT_BATCH_IDLE_REFUND_MINUTES) come here.
 */
import type { AgentChannel } from '../shared/agent-channels.js';
import type { Logger } from '../shared/log.js';
import type { BatchPayer } from './batch-pay.js';
import type { Wallets } from './wallets.js';

/** What refunding runs on: the agent's batch payer (its channel book), wallets and log. */
export interface RefundDeps {
  batch?: BatchPayer;
  wallets: Wallets;
  log: Logger;
}

/** Which channels to refund: one by id, those idle for `idleMinutes`, else every one with money left. */
export interface RefundSelection {
  channelId?: string;
  idleMinutes?: number;
}

/** One refund's result: the amount returned (smallest units), or why it failed (never the seller's text). */
export type RefundResult =
  { channelId: string; refunded: string; transaction?: string } | { channelId: string; failed: string };

/** What a channel still holds beyond what was charged, per its stored state. */
export function refundable(channel: AgentChannel): bigint {
  const balance = BigInt(channel.context?.balance ?? '0');
  const charged = BigInt(channel.context?.chargedCumulativeAmount ?? '0');
  return balance > charged ? balance - charged : 0n;
}

/** Whether `channel` matches the selection and has money to give back. */
function selected(channel: AgentChannel, which: RefundSelection, now: number): boolean {
  if (refundable(channel) === 0n || !channel.resource || !channel.network) return false;
  if (which.channelId) return channel.channelId === which.channelId.toLowerCase();
  if (which.idleMinutes !== undefined) return now - Date.parse(channel.lastUsedAt) >= which.idleMinutes * 60_000;
  return true;
}

/** Refunds the selected channels one by one; a failure of one does not stop the others. */
export async function refundChannels(deps: RefundDeps, which: RefundSelection): Promise<RefundResult[]> {
  const { batch, wallets, log } = deps;
  if (!batch) return [];
  const now = Date.now();
  const results: RefundResult[] = [];
  for (const channel of (await batch.book.list()).filter((c) => selected(c, which, now))) {
    const amount = refundable(channel);
    const scheme = wallets.batchScheme?.(channel.network!);
    if (!scheme) {
      results.push({ channelId: channel.channelId, failed: 'no batch-settlement signer for its network' });
      continue;
    }
    try {
      const lane = { network: channel.network!, payTo: channel.payTo ?? '', asset: channel.asset ?? '' };
      const settle = await batch.inTurn(lane, () => scheme.refund(channel.resource!));
      if (!settle.success) throw new Error(settle.errorReason ?? 'refund_failed');
      await batch.book.released(channel.channelId, amount.toString(), 'refunded');
      log.info('refunded a batch-settlement channel', { channelId: channel.channelId, amount: amount.toString() });
      results.push({
        channelId: channel.channelId,
        refunded: amount.toString(),
        ...(settle.transaction ? { transaction: settle.transaction } : {}),
      });
    } catch (err) {
      // Only the reason's first words: the seller's text is not echoed.
      const reason = String((err as Error)?.message ?? err)
        .split(/[\n:]/, 1)[0]!
        .slice(0, 120);
      log.warn('a batch-settlement refund failed', { channelId: channel.channelId, reason });
      results.push({ channelId: channel.channelId, failed: reason });
    }
  }
  return results;
}
