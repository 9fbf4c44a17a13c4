/**
 * The seller's batch-settlement channels as `tollbooth channels` and the metrics show them, from the `batch_channels`
 * columns (no channel record parsed): payer, network (the network of the table whose asset is the channel's token),
 * balance, charged, claimed, unclaimed and idle time.
 */
import type { NetworkEntry } from '../../shared/networks.js';
import type { ChannelSummary } from '../../store/batch-upkeep.js';

/** One channel of the report; amounts in token base units, `units` in the asset's decimal units when known. */
export interface ChannelRow {
  channelId: string;
  payer: string;
  network: string | null;
  token: string;
  balance: string;
  charged: string;
  claimed: string;
  unclaimed: string;
  /** Seconds since the channel's last request. */
  idleSeconds: number;
  /** True while a verified call holds the channel. */
  busy: boolean;
  units: { balance: string; charged: string; claimed: string } | null;
}

/** The network whose asset is `token` (lower-case comparison), if one of `networks` has it. */
export function networkOfToken(networks: readonly NetworkEntry[], token: string): NetworkEntry | undefined {
  return networks.find((n) => n.family === 'evm' && n.asset.toLowerCase() === token.toLowerCase());
}

/** Base units as decimal units of `decimals`. */
function toUnits(atomic: string, decimals: number): string {
  const value = BigInt(atomic);
  const scale = 10n ** BigInt(decimals);
  const fraction = (value % scale).toString().padStart(decimals, '0').replace(/0+$/, '');
  return fraction ? `${value / scale}.${fraction}` : `${value / scale}`;
}

/** The report's rows, most recently used first. */
export function channelRows(summaries: readonly ChannelSummary[], networks: readonly NetworkEntry[], now: number) {
  return summaries
    .map((s): ChannelRow => {
      const net = networkOfToken(networks, s.token);
      const unclaimed = BigInt(s.charged) - BigInt(s.claimed);
      return {
        channelId: s.channelId,
        payer: s.payer,
        network: net?.id ?? null,
        token: s.token,
        balance: s.balance,
        charged: s.charged,
        claimed: s.claimed,
        unclaimed: (unclaimed > 0n ? unclaimed : 0n).toString(),
        idleSeconds: Math.max(0, Math.floor((now - s.lastRequestAt) / 1000)),
        busy: s.pendingUntil !== undefined && s.pendingUntil > now,
        units: net
          ? {
              balance: toUnits(s.balance, net.decimals),
              charged: toUnits(s.charged, net.decimals),
              claimed: toUnits(s.claimed, net.decimals),
            }
          : null,
      };
    })
    .sort((a, b) => a.idleSeconds - b.idleSeconds || a.channelId.localeCompare(b.channelId));
}

/** Channels with a balance and the unclaimed value, per network of `networks` (each listed, even at zero). */
export function unclaimedByNetwork(
  summaries: readonly ChannelSummary[],
  networks: readonly NetworkEntry[],
): { network: string; open: number; unclaimed: bigint }[] {
  const byNetwork = new Map(networks.map((n) => [n.id, { network: n.id, open: 0, unclaimed: 0n }]));
  for (const s of summaries) {
    const entry = byNetwork.get(networkOfToken(networks, s.token)?.id ?? '');
    if (!entry) continue;
    if (BigInt(s.balance) > 0n) entry.open += 1;
    const unclaimed = BigInt(s.charged) - BigInt(s.claimed);
    if (unclaimed > 0n) entry.unclaimed += unclaimed;
  }
  return [...byNetwork.values()];
}

/** A duration in seconds as `3d4h`, `5h12m`, `7m3s` or `42s`. */
export function formatIdle(seconds: number): string {
  const d = Math.floor(seconds / 86_400);
  const h = Math.floor((seconds % 86_400) / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  if (d) return `${d}d${h}h`;
  if (h) return `${h}h${m}m`;
  return m ? `${m}m${s}s` : `${s}s`;
}

/** The report as text: one line per channel, then the totals' line. */
export function formatChannels(rows: readonly ChannelRow[]): string {
  if (rows.length === 0) return 'No batch-settlement channels.\n';
  const head = ['CHANNEL', 'PAYER', 'NETWORK', 'BALANCE', 'CHARGED', 'CLAIMED', 'IDLE'];
  const body = rows.map((r) => [
    `${r.channelId.slice(0, 10)}…`,
    r.payer,
    r.network ?? r.token,
    r.units?.balance ?? r.balance,
    r.units?.charged ?? r.charged,
    r.units?.claimed ?? r.claimed,
    `${formatIdle(r.idleSeconds)}${r.busy ? ' (in a call)' : ''}`,
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((line) => line[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return `${[line(head), ...body.map(line)].join('\n')}\n${rows.length} channel(s)\n`;
}
