/** The rows of `tollbooth receipts`: receipts, pending settlements, and claims in doubt (with the local journal). */
import { entryKey, entryTime, type OutboxEntry } from '../payments/ledger/settled-journal.js';
import { batchOperationKind } from '../payments/batch/kinds.js';
import type { PaymentRow } from './types.js';
import { EVERY_CLAIM, type PaymentLedger, type PendingRecord, type ReceiptRecord } from '../store/ledger.js';

/** What the listing reads from the store. */
export type ReceiptsLedger = Pick<PaymentLedger, 'listReceipts' | 'listPending' | 'listStaleClaims'>;

/** A row without its decimal units (added once every row is known). */
export type BareRow = Omit<PaymentRow, 'units'>;

const ageOf = (time: string, now: number): number => Math.max(0, Math.floor((now - Date.parse(time)) / 1000));

/** A receipt as a row. */
export function receiptRow(r: ReceiptRecord): BareRow {
  return {
    status: r.status,
    time: r.createdAt,
    tool: r.tool,
    network: r.network,
    amount: r.amount,
    payer: r.payer,
    transport: r.transport,
    protocol: r.protocol ?? 'x402',
    transaction: r.transaction,
    ...(r.kind && r.kind !== 'transfer' ? { kind: r.kind } : {}),
    ...(r.channelId ? { channelId: r.channelId } : {}),
    ...(r.cumulativeAmount ? { cumulativeAmount: r.cumulativeAmount } : {}),
    ...(r.errorReason ? { errorReason: r.errorReason } : {}),
  };
}

/** A pending settlement, or a claim in doubt, as a row. */
function claimRow(p: PendingRecord, status: 'pending' | 'in_doubt', now: number, reason?: string): BareRow {
  const time = status === 'pending' ? p.updatedAt : p.createdAt;
  const kind = batchOperationKind(p.replayKey);
  return {
    status,
    time,
    tool: p.tool,
    network: p.network,
    amount: p.amount,
    payer: p.payer,
    transport: p.transport,
    protocol: p.protocol ?? 'x402',
    transaction: p.transaction,
    ...(kind ? { kind } : {}),
    ...(reason ? { errorReason: reason } : {}),
    ageSeconds: ageOf(time, now),
  };
}

/** A journaled outcome as an in-doubt row: settled (or pending) by the facilitator, not yet in the store. */
function journalRow(entry: OutboxEntry, now: number): BareRow {
  const claim = entry.type === 'settled' ? entry.receipt : entry.claim;
  const time = entryTime(entry);
  return {
    status: 'in_doubt',
    time,
    tool: claim.tool,
    network: claim.network,
    amount: claim.amount,
    payer: claim.payer,
    transport: claim.transport,
    protocol: claim.protocol ?? 'x402',
    transaction: entry.type === 'settled' ? entry.receipt.transaction : entry.details.transaction,
    errorReason: entry.type === 'settled' ? 'settled_not_stored' : 'pending_not_stored',
    ageSeconds: ageOf(time, now),
  };
}

/**
 * Every payment the store and the journal know, one row per replay key: receipts, pending settlements, and claims
 * whose outcome is not stored — `in_flight` (the call runs or is being settled, or its process stopped mid-call) or,
 * when the journal holds their outcome, `settled_not_stored` / `pending_not_stored` with its transaction.
 */
export async function paymentRows(
  ledger: ReceiptsLedger,
  journal: readonly OutboxEntry[],
  limit: number,
): Promise<BareRow[]> {
  const now = Date.now();
  const [receipts, pending, claimed] = await Promise.all([
    ledger.listReceipts({ limit }),
    ledger.listPending(),
    ledger.listStaleClaims(EVERY_CLAIM),
  ]);
  const journaled = new Map(journal.map((entry) => [entryKey(entry), entry]));
  const recorded = new Set(receipts.filter((r) => r.status === 'settled').map((r) => r.replayKey));
  const rows = receipts.map(receiptRow);
  const listed = new Set<string>();
  for (const p of pending) {
    const entry = journaled.get(p.replayKey);
    // Settled by the facilitator while the store still says pending: the journal knows better.
    rows.push(entry?.type === 'settled' ? journalRow(entry, now) : claimRow(p, 'pending', now));
    listed.add(p.replayKey);
  }
  for (const c of claimed) {
    const entry = journaled.get(c.replayKey);
    rows.push(entry ? journalRow(entry, now) : claimRow(c, 'in_doubt', now, 'in_flight'));
    listed.add(c.replayKey);
  }
  for (const [key, entry] of journaled)
    if (!listed.has(key) && !recorded.has(key) && entry.type === 'settled') rows.push(journalRow(entry, now));
  return rows;
}
