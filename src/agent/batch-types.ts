/** The values a batch-settlement call passes around (batch-pay.ts): its dependencies, its choice, its channel lane. */
import type { PaymentPayload } from '@x402/core/types';
import type { z } from 'zod';
import type { NetworkEntry } from '../shared/networks.js';
import type { NewSpend } from '../shared/spends.js';
import type { VoucherDraw } from '../shared/agent-channels.js';
import type { Offers, PricedOption } from './choose.js';
import type { McpRemotes } from './mcp-remote.js';
import type { OriginSettings } from './origins.js';
import type { RemoteRequest } from './remote.js';
import type { AgentSettings } from './settings.js';
import type { Wallets } from './wallets.js';

/** What a batch-settlement call runs on (the caller's dependencies; declared here so the caller can hold a BatchPayer). */
export interface BatchCallDeps {
  settings: AgentSettings;
  /** The remote MCP endpoints the agent talks to (a call to one goes through its client). */
  mcp: McpRemotes;
  networks: readonly NetworkEntry[];
  wallets: Wallets;
}

/** The chosen batch-settlement entry of one call (the caller's chosen payment). */
export interface BatchChoice {
  target: { name: string; output: z.ZodType };
  request: RemoteRequest;
  hash: string;
  offers: Offers;
  chosen: PricedOption;
  capMicros: number;
}

/** The user's answer to "pay this?" (MCP elicitation; `--yes` on the command line). */
export type Approve = (question: string) => Promise<'accepted' | 'declined' | 'unavailable'>;

/** Calls' price deposited into a new channel when AGENT_BATCH_DEPOSIT_USD is unset. */
export const DEFAULT_DEPOSIT_CALLS = 20n;

/** The call being signed on a channel, as the deposit strategy sees it. */
export interface Signing {
  spend: NewSpend;
  decimals: number;
  /** The user's per-origin caps (AGENT_ORIGIN_LIMITS): a deposit is bounded by its origin's. */
  origins?: OriginSettings | undefined;
  deposit?: { id: string; amount: bigint; usdMicros: number };
}

/** A deposit the budget does not allow (thrown from the deposit strategy, so nothing is signed). */
export class DepositRefused extends Error {
  constructor(
    message: string,
    /** The rule that refused it, when it is an origin's own cap (the refusal's details). */
    readonly details?: { rule: string; origin?: string | undefined },
  ) {
    super(message);
  }
}

/** The channel a payload pays through (deposit and voucher payloads both carry the voucher). */
export function channelOf(payload: PaymentPayload): string {
  return (payload.payload as { voucher: { channelId: string } }).voucher.channelId.toLowerCase();
}

/** What names a channel of this payer: (network, pay-to, asset). */
export interface Lane {
  network: string;
  payTo: string;
  asset: string;
}

/** Calls on one (network, pay-to, asset) share one channel of this payer. */
export function laneOf(option: Lane): string {
  return `${option.network}|${option.payTo}|${option.asset}`.toLowerCase();
}

/** A signed batch-settlement payment on its way, with its bookings. */
export interface Sent {
  spend: NewSpend;
  payload: PaymentPayload;
  draw: VoucherDraw;
  deposit?: { id: string };
  /** Whether a corrective 402 may still be answered by signing again. */
  retry: boolean;
}
