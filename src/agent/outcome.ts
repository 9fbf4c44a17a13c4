import type { SettleResponse } from '@x402/core/types';
import type { ToolError } from '../shared/errors.js';
import type { PaymentProtocol, SpendStatus } from '../shared/spends.js';
import type { OptionRejection } from './choose.js';
import type { RemoteChallenge } from './http.js';
import type { MppChallenge, MppReceipt } from './mpp.js';

/** What the agent paid for a call, shown with its result (`_meta["tollbooth/payment"]`, or stderr for `tollbooth call`). */
export interface PaymentNote {
  status: SpendStatus;
  /** The protocol it was paid with: x402 or MPP. */
  protocol: PaymentProtocol;
  network: string;
  asset: string;
  /** Amount in the asset's smallest units. */
  amount: string;
  usd: string;
  paymentId?: string;
  /** Today's counted spending (UTC day) and what is left of the daily budget, after this payment. */
  spentToday: string;
  remainingToday: string;
}

/** One advertised option as a dry run shows it. */
export interface OptionReport {
  protocol: PaymentProtocol;
  scheme: string;
  network: string;
  asset: string;
  amount: string;
  usd?: string;
  /** Why it would not be paid. */
  rejected?: OptionRejection;
}

/** What `--dry-run` shows: the challenge, every option valued, the one it would pay, and the budget. */
export interface DryRunReport {
  tool: string;
  url: string;
  /** The x402 challenge's version; absent when the remote offered MPP only. */
  x402Version?: number;
  options: OptionReport[];
  chosen?: OptionReport;
  /** The payment would need the user's approval first (BUDGET_ASK_ABOVE_USD). */
  needsApproval: boolean;
  /** One sentence: what a real call would do. */
  verdict: string;
  budget: {
    day: string;
    spentToday: string;
    remainingToday: string;
    maxPerCall: string;
    maxPerDay: string;
    askAbove?: string;
  };
  challenge?: RemoteChallenge;
  /** The MPP challenges (`WWW-Authenticate: Payment`), when offered. */
  mpp?: MppChallenge[];
}

/** What a call through the remote deployment came to; adapters (MCP, command line) encode it and nothing else. */
export type CallOutcome =
  | { type: 'success'; output: unknown; receipt?: SettleResponse; mppReceipt?: MppReceipt; payment?: PaymentNote }
  /** Not paid because no wallet can pay any option: the requirements (x402 challenge and/or MPP challenges), as in local mode, and how to configure a wallet. */
  | { type: 'payment_required'; challenge?: RemoteChallenge; mpp?: MppChallenge[]; hint: string }
  /** Not done, or paid but not delivered, for the reason in the error (budget, approval, refused or failed payment, pending outcome). */
  | { type: 'refused'; error: ToolError; receipt?: SettleResponse; mppReceipt?: MppReceipt; payment?: PaymentNote }
  /** The remote's own error answer, passed through (nothing was charged). */
  | { type: 'remote_error'; status: number; body: unknown; receipt?: SettleResponse }
  | { type: 'dry_run'; report: DryRunReport };

/** A call not done (or paid but not delivered) for the reason in `error`, with what was paid when anything was. */
export function refused(error: ToolError, payment?: PaymentNote): CallOutcome {
  return { type: 'refused', error, ...(payment ? { payment } : {}) };
}
