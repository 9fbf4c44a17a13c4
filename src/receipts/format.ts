import type { PaymentRow, ReceiptsReport, StatusSum, Total } from './types.js';

/** Left-aligned columns separated by two spaces; the last column is not padded. */
function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

/** The asset a network is paid in, as shown to the operator. */
function assetOf(t: Pick<Total, 'assetName' | 'asset' | 'decimals'>): string {
  if (t.decimals === null) return 'unknown asset (not in the network table: atomic units)';
  const asset =
    t.assetName ?? (t.asset && t.asset.length > 16 ? `${t.asset.slice(0, 6)}…${t.asset.slice(-4)}` : t.asset);
  return `${asset ?? '?'} (${t.decimals} decimals)`;
}

const amountOf = (atomic: string, units: string | null) => (units === null ? `${atomic} atomic` : units);
const sumOf = (s: StatusSum) => (s.count === 0 ? '-' : `${s.count}: ${amountOf(s.amount, s.units)}`);

/** An age as the largest whole unit: "42s", "7m", "3h", "2d". */
function ageText(seconds: number): string {
  if (seconds < 120) return `${seconds}s`;
  if (seconds < 7200) return `${Math.floor(seconds / 60)}m`;
  return seconds < 172_800 ? `${Math.floor(seconds / 3600)}h` : `${Math.floor(seconds / 86_400)}d`;
}

/** The transaction column: the hash, or for a batch-settlement receipt its kind, channel and cumulative amount. */
function transactionText(p: PaymentRow): string {
  if (!p.kind) return p.transaction || '-';
  const channel = p.channelId ? ` channel ${p.channelId}` : '';
  const cumulative = p.cumulativeAmount ? ` cumulative ${p.cumulativeAmount}` : '';
  return `${p.kind}${channel}${cumulative}${p.transaction ? ` ${p.transaction}` : ''}`;
}

function paymentLine(p: PaymentRow): string[] {
  return [
    p.time,
    p.status,
    p.tool,
    p.network,
    amountOf(p.amount, p.units),
    p.transport,
    p.protocol,
    p.payer,
    transactionText(p),
    p.errorReason ?? '',
    p.ageSeconds === undefined ? '' : ageText(p.ageSeconds),
  ];
}

function totalLine(t: Total, first?: 'tool' | 'protocol'): string[] {
  return [
    ...(first ? [t[first] ?? ''] : []),
    t.network,
    t.label ?? '',
    assetOf(t),
    sumOf(t.settled),
    sumOf(t.pending),
    sumOf(t.failed),
    sumOf(t.inDoubt),
  ];
}

/** " (settled only)", " (mpp only)", " (settled, mpp only)" or "" as the filter asks. */
function filterText({ status, protocol }: ReceiptsReport['filter']): string {
  const parts = [status, protocol].filter((p) => p !== null);
  return parts.length === 0 ? '' : ` (${parts.join(', ')} only)`;
}

/** Renders the report for a terminal: recent payments, then totals by network, by tool and by protocol. */
export function formatReceiptsReport(report: ReceiptsReport): string {
  const store = report.store.kind === 'postgres' ? `PostgreSQL ${report.store.where}` : `SQLite ${report.store.where}`;
  const filter = filterText(report.filter);
  const out = [`Store: ${store}`, ''];
  if (report.count.total === 0) {
    out.push(`No payments${filter} recorded.`);
    return `${out.join('\n')}\n`;
  }
  const more = report.count.total > report.count.shown ? ` (--limit ${report.count.total} shows all)` : '';
  out.push(`Payments${filter}: ${report.count.shown} most recent of ${report.count.total}${more}`);
  out.push(
    table(
      ['TIME', 'STATUS', 'TOOL', 'NETWORK', 'AMOUNT', 'VIA', 'PROTOCOL', 'PAYER', 'TRANSACTION', 'REASON', 'AGE'],
      report.payments.map(paymentLine),
    ),
  );
  const head = ['NETWORK', 'LABEL', 'ASSET', 'SETTLED', 'PENDING', 'FAILED', 'IN DOUBT'];
  out.push('', `Totals by network${filter}, in each network's asset (count: amount; never added across networks):`);
  out.push(
    table(
      head,
      report.totals.byNetwork.map((t) => totalLine(t)),
    ),
  );
  out.push('', `Totals by tool and network${filter}:`);
  out.push(
    table(
      ['TOOL', ...head],
      report.totals.byTool.map((t) => totalLine(t, 'tool')),
    ),
  );
  out.push('', `Totals by protocol and network${filter}:`);
  out.push(
    table(
      ['PROTOCOL', ...head],
      report.totals.byProtocol.map((t) => totalLine(t, 'protocol')),
    ),
  );
  return `${out.join('\n')}\n`;
}
