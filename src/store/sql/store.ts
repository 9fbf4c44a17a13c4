import { randomUUID } from 'node:crypto';
import type { AgentChannelBook } from '../../shared/agent-channels.js';
import type { RateBuckets } from '../buckets.js';
import type { BatchChannels } from '../channels.js';
import type { BatchUpkeep } from '../batch-upkeep.js';
import type { PaymentLedger } from '../ledger.js';
import type { SpendLedger } from '../../shared/spends.js';
import type { Store } from '../store.js';
import type { ToolState } from '../tool-state.js';
import { sqlAgentChannels } from './agent-channels.js';
import { sqlRateBuckets } from './buckets.js';
import { sqlBatchChannels } from './channels.js';
import { sqlBatchUpkeep } from './batch-upkeep.js';
import { sqlPaymentLedger } from './ledger.js';
import type { SqlPort } from './port.js';
import { sqlSpendLedger } from './spends.js';
import { sqlToolState } from './tool-state.js';

/** One opened database (either dialect) and its four parts, each written once over the SQL port. */
export class SqlStore implements Store {
  readonly ledger: PaymentLedger;
  readonly toolState: ToolState;
  readonly spends: SpendLedger;
  readonly buckets: RateBuckets;
  readonly agentChannels: AgentChannelBook;
  /** The seller's batch-settlement channels (the official server scheme's storage, src/payments/batch/). */
  readonly channels: BatchChannels;
  /** Channel summaries and claim-round leases (src/payments/batch/claim-loop.ts). */
  readonly batchUpkeep: BatchUpkeep;
  /** This process's key of the write probe, so instances sharing a database never write the same row. */
  private readonly probeKey = randomUUID();

  protected constructor(private readonly port: SqlPort) {
    this.ledger = sqlPaymentLedger(port);
    this.toolState = sqlToolState(port);
    this.spends = sqlSpendLedger(port);
    this.buckets = sqlRateBuckets(port);
    this.agentChannels = sqlAgentChannels(port);
    this.channels = sqlBatchChannels(port);
    this.batchUpkeep = sqlBatchUpkeep(port);
  }

  durable(): Promise<void> {
    return this.port.durable();
  }

  async ping(): Promise<void> {
    await this.port.read('SELECT 1');
  }

  /**
   * Writes a row and deletes it: a full disk, a SQLite file that cannot grow or a read-only PostgreSQL fail it. The
   * row lives in the rate-bucket table under a key no limiter uses, with a time of 0 that the buckets' purge removes.
   */
  async probeWrite(): Promise<void> {
    const key = `readyz:${this.probeKey}`;
    await this.port.write(
      'INSERT INTO rate_buckets (key, tat) VALUES (?, 0) ON CONFLICT (key) DO UPDATE SET tat = excluded.tat',
      [key],
    );
    await this.port.write('DELETE FROM rate_buckets WHERE key = ?', [key]);
  }

  close(): Promise<void> {
    return this.port.close();
  }
}
