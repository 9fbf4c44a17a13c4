import type { PaymentProtocol, ReceiptKind } from '../store/store.js';

/**
 * The states a payment can be listed in: a receipt (settled or failed), a pending settlement, or in doubt (its call is
 * running or being settled, or it settled and its outcome waits in the journal for the store).
 */
export type PaymentStatus = 'settled' | 'pending' | 'in_doubt' | 'failed';

/** One payment as the operator sees it: a receipt (settled or failed), a pending settlement or a claim in doubt. */
export interface PaymentRow {
  status: PaymentStatus;
  time: string;
  tool: string;
  network: string;
  /** Atomic units of the network's asset. */
  amount: string;
  /** The amount in the asset's decimal units (null when the network is not in the table). */
  units: string | null;
  payer: string;
  transport: string;
  /** The protocol the payment arrived in: x402, or MPP (`Authorization: Payment`). */
  protocol: PaymentProtocol;
  transaction: string;
  /** A batch-settlement receipt's kind (`voucher`, `deposit`, …), channel and cumulative amount; absent for a transfer. */
  kind?: ReceiptKind;
  channelId?: string;
  cumulativeAmount?: string;
  errorReason?: string;
  /** Seconds since the claim or pending settlement was last written (pending and in_doubt rows only). */
  ageSeconds?: number;
}

/** Count and sums of one status within a group. */
export interface StatusSum {
  count: number;
  /** Atomic units. */
  amount: string;
  units: string | null;
}

/**
 * Totals of one network (in `byTool` also one tool, in `byProtocol` also one protocol) per status; amounts are never
 * added across networks.
 */
export interface Total {
  tool?: string;
  protocol?: PaymentProtocol;
  network: string;
  label: string | null;
  asset: string | null;
  assetName: string | null;
  decimals: number | null;
  settled: StatusSum;
  pending: StatusSum;
  failed: StatusSum;
  inDoubt: StatusSum;
}

/** What `tollbooth receipts` reports. */
export interface ReceiptsReport {
  store: { kind: 'postgres' | 'sqlite'; where: string };
  filter: { status: PaymentStatus | null; protocol: PaymentProtocol | null; limit: number };
  /** Payments matching the filter: `shown` most recent of `total`. */
  count: { shown: number; total: number };
  payments: PaymentRow[];
  /** Over every payment matching the filter, not only the ones shown. */
  totals: { byNetwork: Total[]; byTool: Total[]; byProtocol: Total[] };
}
