/**
 * The store, split by who uses it: the payment ledger (broker, reconciler), tool state (handlers), the agent's spending
 * ledger and the rate buckets. One opened database provides all four; the composition root hands each consumer its part.
 */
import type { RateBuckets } from './buckets.js';
import type { PaymentLedger } from './ledger.js';
import type { SpendLedger } from '../shared/spends.js';
import type { AgentChannelBook } from '../shared/agent-channels.js';
import type { ToolState } from './tool-state.js';
import type { BatchChannels } from './channels.js';
import type { BatchUpkeep } from './batch-upkeep.js';

export type * from './buckets.js';
export type * from './ledger.js';
export type * from '../shared/spends.js';
export type * from './tool-state.js';

/** One opened database, as the process that opened it owns it: its four parts, durability, health and closing. */
export interface Store {
  ledger: PaymentLedger;
  toolState: ToolState;
  spends: SpendLedger;
  /** The agent's batch-settlement channels and deposits (next to its spending ledger). */
  agentChannels: AgentChannelBook;
  buckets: RateBuckets;
  /** The seller's batch-settlement channels (absent in stores that keep none, e.g. test doubles). */
  channels?: BatchChannels;
  /** Channel summaries and claim-round leases of the seller's claim loop (absent where `channels` is). */
  batchUpkeep?: BatchUpkeep;
  /** Resolves once every write made so far survives a power loss (see {@link PaymentLedger.durable}). */
  durable(): Promise<void>;
  /** Checks that the store answers. */
  ping(): Promise<void>;
  /** Checks that the store takes a write (a row written and deleted): readiness probes this, not only `ping()`. */
  probeWrite(): Promise<void>;
  close(): Promise<void>;
}
