/**
 * `tollbooth deposits`: the agent's batch-settlement channels (deposited, charged, still committed against the
 * budget, refunded, idle time), and cooperative refunds of them (`--refund [<channelId>]`, `--refund-idle`). The
 * seller's channels are another listing (the server's own commands); this one is the payer's.
 */
import type { AgentChannel } from '../shared/agent-channels.js';
import type { Logger } from '../shared/log.js';
import type { OpenSpends } from '../shared/spends.js';
import { createAgent } from './agent.js';
import { refundable, refundChannels, type RefundResult } from './batch-refund.js';
import { withdrawChannels, type WithdrawResult } from './batch-withdraw.js';
import { toUsdMicros, usd } from './choose.js';
import type { AgentConfig } from './settings.js';

/** What `tollbooth deposits` was asked to do. */
export interface DepositsArgs {
  /** Refund: every channel with money left, or only `channelId`. */
  refund: boolean;
  /** Refund channels idle for AGENT_BATCH_IDLE_REFUND_MINUTES (or `idleMinutes`). */
  refundIdle: boolean;
  /** Start (or, once the channel's delay has passed on chain, finish) the timed withdrawal of every channel, or of `channelId`. */
  withdraw?: boolean;
  idleMinutes?: number;
  channelId?: string;
  json: boolean;
}

/** One channel as listed. */
export interface DepositRow {
  channelId: string;
  network?: string;
  payTo?: string;
  resource?: string;
  /** Smallest units of the asset. */
  deposited: string;
  charged: string;
  refunded: string;
  refundable: string;
  committed: string;
  spent: string;
  idleMinutes: number;
}

/** A channel as a listing row. */
export function depositRow(channel: AgentChannel, now = Date.now()): DepositRow {
  const dollars = (atomic: string) =>
    channel.decimals === undefined ? atomic : usd(toUsdMicros(BigInt(atomic), channel.decimals));
  return {
    channelId: channel.channelId,
    ...(channel.network ? { network: channel.network } : {}),
    ...(channel.payTo ? { payTo: channel.payTo } : {}),
    ...(channel.resource ? { resource: channel.resource } : {}),
    deposited: dollars(channel.deposited),
    charged: dollars(channel.context?.chargedCumulativeAmount ?? '0'),
    refunded: dollars(channel.refunded),
    refundable: dollars(refundable(channel).toString()),
    committed: usd(channel.committedMicros),
    spent: usd(channel.spentMicros),
    idleMinutes: Math.floor((now - Date.parse(channel.lastUsedAt)) / 60_000),
  };
}

/** One withdrawal step as a line. */
function withdrawLine(w: WithdrawResult): string {
  if ('failed' in w) return `withdrawal from ${w.channelId} failed: ${w.failed}`;
  if ('started' in w)
    return `withdrawal of ${w.started} units from ${w.channelId} started; finish it after ${w.readyAt}`;
  if ('waiting' in w) return `withdrawal of ${w.waiting} units from ${w.channelId} can be finished after ${w.readyAt}`;
  return `withdrew ${w.withdrawn} units from ${w.channelId}`;
}

/** The listing as text, one channel a line. */
export function formatDeposits(
  rows: readonly DepositRow[],
  refunds: readonly RefundResult[],
  withdrawals: readonly WithdrawResult[] = [],
): string {
  const lines = rows.map(
    (r) =>
      `${r.channelId.slice(0, 18)}…  ${r.network ?? '?'}  to ${r.payTo ?? '?'}  deposited ${r.deposited}  charged ${r.charged}  refundable ${r.refundable}  refunded ${r.refunded}  committed ${r.committed}  spent ${r.spent}  idle ${r.idleMinutes}m`,
  );
  const done = refunds.map((r) =>
    'failed' in r ? `refund of ${r.channelId} failed: ${r.failed}` : `refunded ${r.refunded} units from ${r.channelId}`,
  );
  const list = lines.length > 0 ? lines.join('\n') : 'No batch-settlement channels.';
  return `${[...done, ...withdrawals.map(withdrawLine), list].join('\n')}\n`;
}

/** Lists the channels (refunding first when asked): the text (or JSON) to print, exit code 1 when a refund failed. */
export async function runDeposits(
  config: AgentConfig,
  args: DepositsArgs,
  openSpends: OpenSpends,
  log: Logger,
): Promise<{ text: string; code: number }> {
  // Refunds need the batch signer even when new deposits are switched off; the idle sweep is this command's own.
  const batch = {
    enabled: true,
    ...(config.settings.batch.depositUsd ? { depositUsd: config.settings.batch.depositUsd } : {}),
  };
  const batchOn = { ...config, settings: { ...config.settings, batch } };
  const agent = await createAgent(batchOn, log, openSpends);
  try {
    const idleMinutes = args.idleMinutes ?? config.settings.batch.idleRefundMinutes;
    if (args.refundIdle && idleMinutes === undefined)
      throw new Error('--refund-idle needs AGENT_BATCH_IDLE_REFUND_MINUTES (or --idle <minutes>)');
    const refunds =
      args.refund || args.refundIdle
        ? await refundChannels(agent, {
            ...(args.channelId ? { channelId: args.channelId } : {}),
            ...(args.refundIdle ? { idleMinutes } : {}),
          })
        : [];
    const withdrawals = args.withdraw ? await withdrawChannels({ ...agent, log }, args.channelId) : [];
    const rows = ((await agent.batch?.book.list()) ?? []).map((c) => depositRow(c));
    const text = args.json
      ? `${JSON.stringify({ refunds, ...(args.withdraw ? { withdrawals } : {}), channels: rows }, null, 2)}\n`
      : formatDeposits(rows, refunds, withdrawals);
    const failed = [...refunds, ...withdrawals].some((r) => 'failed' in r);
    return { text, code: failed ? 1 : 0 };
  } finally {
    await agent.close();
  }
}
