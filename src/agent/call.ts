/** A call as the remote caller takes it: its target, the per-call options, the user's approval, and what it runs on. */
import type { z } from 'zod';
import type { Logger } from '../shared/log.js';
import type { NetworkEntry } from '../shared/networks.js';
import type { ToolGroup } from '../shared/tool-endpoint.js';
import type { SpendLedger } from '../shared/spends.js';
import type { BatchPayer } from './batch-pay.js';
import type { Budget } from './budget.js';
import type { McpRemotes } from './mcp-remote.js';
import type { ReceiptChecks } from './receipt-check.js';
import type { RemoteRequest } from './remote.js';
import type { AgentSettings } from './settings.js';
import type { Wallets } from './wallets.js';

/** A tool as the caller sees it: where it lives, what it takes and returns, whether it is paid. */
export interface CallTarget {
  name: string;
  group: ToolGroup;
  method: 'GET' | 'POST';
  path: string;
  input: z.ZodType;
  output: z.ZodType;
  paid: boolean;
  /** A catalog tool's own request (remote mode over any seller); without it, the group's remote and the route above. */
  request?: (input: unknown) => RemoteRequest;
  /** The price the remote's catalog published, in millionths of a dollar: a challenge above it by more than AGENT_PRICE_DRIFT is refused. */
  expectedUsdMicros?: number;
}

/** The user's answer to "pay this?". */
export type Approval = 'accepted' | 'declined' | 'unavailable';

/** Per-call options of the transport that makes the call. */
export interface CallOptions {
  signal: AbortSignal;
  /** Asks the user to approve a payment above the threshold (MCP elicitation; `--yes` on the command line). */
  approve: (question: string) => Promise<Approval>;
  /** Per-call cap for this call in dollars (`--max-usd`), instead of BUDGET_MAX_USD_PER_CALL. */
  maxUsdPerCall?: number;
  /** Show the challenge and the option that would be paid; pay nothing. */
  dryRun?: boolean;
  /** The price the caller expects in dollars (`--expect-price`): a challenge above it by more than AGENT_PRICE_DRIFT is refused. */
  expectUsd?: number;
}

/** What the caller runs on. */
export interface CallerDeps {
  settings: AgentSettings;
  networks: readonly NetworkEntry[];
  spends: SpendLedger;
  wallets: Wallets;
  budget: Budget;
  log: Logger;
  /** The remote MCP endpoints the agent talks to (a call to one goes through its client). */
  mcp: McpRemotes;
  /** Pays `batch-settlement` entries (AGENT_BATCH_SETTLEMENT=on with a store that keeps channels). */
  batch?: BatchPayer;
  /** Checks on chain the payments sellers report settled (AGENT_CHECK_RECEIPTS). */
  receiptChecks?: ReceiptChecks;
}
