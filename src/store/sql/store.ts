import type { RateBuckets } from '../buckets.js';
import type { PaymentLedger } from '../ledger.js';
import type { SpendLedger } from '../spends.js';
import type { Store } from '../store.js';
import type { ToolState } from '../tool-state.js';
import { sqlRateBuckets } from './buckets.js';
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

  protected constructor(private readonly port: SqlPort) {
    this.ledger = sqlPaymentLedger(port);
    this.toolState = sqlToolState(port);
    this.spends = sqlSpendLedger(port);
    this.buckets = sqlRateBuckets(port);
  }

  durable(): Promise<void> {
    return this.port.durable();
  }

  async ping(): Promise<void> {
    await this.port.read('SELECT 1');
  }

  close(): Promise<void> {
    return this.port.close();
  }
}
