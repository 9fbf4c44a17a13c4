/** Rows of the shared schema as the store's records, the same for both dialects. */
import type { PaymentClaim, PendingRecord, ReceiptKind, ReceiptRecord } from '../ledger.js';
import type { SpendRecord, SpendStatus } from '../../shared/spends.js';
import type { OrderRecord } from '../tool-state.js';
import type { Row } from './port.js';

/** A time column as the interface's ISO string (SQLite keeps the text, PostgreSQL gives a Date). */
export const time = (value: unknown): string => (value instanceof Date ? value.toISOString() : String(value));

/** A JSON parameter: its text, or NULL for undefined. */
export const json = (value: unknown): string | null => (value === undefined ? null : JSON.stringify(value));

/** A JSON column (its text, in both dialects) as a value; NULL and JSON null are undefined. */
export const fromJson = (value: unknown): unknown =>
  value === null || value === undefined ? undefined : ((JSON.parse(String(value)) as unknown) ?? undefined);

/** A nullable text column as an optional string. */
const optional = (value: unknown): string | undefined =>
  value === null || value === undefined ? undefined : String(value);

/** The claim columns every `payment_claims` and `receipts` row has. */
export function claimFromRow(row: Row): PaymentClaim {
  return {
    replayKey: String(row.replay_key),
    tool: String(row.tool),
    network: String(row.network),
    payer: String(row.payer),
    amount: String(row.amount),
    transport: row.transport === 'mcp' ? 'mcp' : 'http',
    protocol: row.protocol === 'mpp' ? 'mpp' : 'x402',
  };
}

/** A `payment_claims` row as a PendingRecord (a stale claim has no output). */
export function pendingFromRow(row: Row): PendingRecord {
  return {
    ...claimFromRow(row),
    transaction: String(row.transaction_id ?? ''),
    payload: fromJson(row.payload),
    requirements: fromJson(row.requirements),
    requestHash: String(row.request_hash ?? ''),
    output: fromJson(row.output),
    ...(row.owner !== null && row.owner !== undefined && { owner: String(row.owner) }),
    createdAt: time(row.created_at),
    updatedAt: time(row.updated_at),
  };
}

/** A `receipts` row as a ReceiptRecord. */
export function receiptFromRow(row: Row): ReceiptRecord {
  const reason = optional(row.error_reason);
  return {
    ...claimFromRow(row),
    transaction: String(row.transaction_id),
    status: row.status === 'settled' ? 'settled' : 'failed',
    ...(reason ? { errorReason: reason } : {}),
    ...channelFields(row),
    createdAt: time(row.created_at),
  };
}

const RECEIPT_KINDS: readonly ReceiptKind[] = ['transfer', 'voucher', 'deposit', 'claim', 'settle', 'refund'];

/** A channel receipt's kind, channel id and cumulative amount (nothing for a transfer, the kind absent means). */
function channelFields(row: Row): Pick<ReceiptRecord, 'kind' | 'channelId' | 'cumulativeAmount'> {
  const kind = RECEIPT_KINDS.find((k) => k === row.kind);
  if (!kind || kind === 'transfer') return {};
  const channelId = optional(row.channel_id);
  const cumulativeAmount = optional(row.cumulative_amount);
  return { kind, ...(channelId ? { channelId } : {}), ...(cumulativeAmount ? { cumulativeAmount } : {}) };
}

/** An `orders` row as an OrderRecord. */
export function orderFromRow(row: Row): OrderRecord {
  return {
    orderId: String(row.order_id),
    serviceId: Number(row.service_id),
    link: String(row.link),
    quantity: Number(row.quantity),
    chargeUsd: Number(row.charge_usd),
    status: String(row.status),
    payer: String(row.payer),
    replayKey: String(row.replay_key),
    createdAt: String(row.created_at),
    updatedAt: String(row.updated_at),
  };
}

/** An `agent_spends` row as a SpendRecord (optional fields only when set). */
export function spendFromRow(row: Row): SpendRecord {
  const optionals = {
    paymentId: optional(row.payment_id),
    payer: optional(row.payer),
    transaction: optional(row.transaction_id),
    note: optional(row.note),
    payload: fromJson(row.payload),
    origin: optional(row.origin),
    payTo: optional(row.pay_to),
    chainCheck: row.chain_check === 'confirmed' || row.chain_check === 'not_seen' ? row.chain_check : undefined,
  };
  return {
    id: String(row.id),
    day: String(row.day),
    tool: String(row.tool),
    resource: String(row.resource),
    requestHash: String(row.request_hash),
    network: String(row.network),
    asset: String(row.asset),
    amount: String(row.amount),
    usdMicros: Number(row.usd_micros),
    status: String(row.status) as SpendStatus,
    protocol: row.protocol === 'mpp' ? 'mpp' : 'x402',
    ...(row.kind === 'deposit' || row.kind === 'voucher' ? { kind: row.kind } : {}),
    ...Object.fromEntries(Object.entries(optionals).filter(([, v]) => v !== undefined)),
    createdAt: time(row.created_at),
    updatedAt: time(row.updated_at),
  };
}
