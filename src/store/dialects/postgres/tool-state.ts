import { rowToOrder, type Row } from './rows.js';
import type { DripClaim, OrderRecord } from '../../store.js';

/** Runs one statement. */
type Query = (sql: string, args?: unknown[]) => Promise<Row[]>;

/** The tool-state methods of the PostgreSQL store: testnet-fund's daily drips and the social-marketing orders. */
export class PostgresToolState {
  constructor(private readonly query: Query) {}

  async claimDrip(subject: string, day: string, limit: number): Promise<DripClaim> {
    // One statement: the first drip of the day, or one more only while under the limit (the row lock serializes callers).
    const [taken] = await this.query(
      `INSERT INTO drips (subject, day, count) SELECT $1, $2, 1 WHERE $3::int > 0
       ON CONFLICT (subject, day) DO UPDATE SET count = drips.count + 1 WHERE drips.count < $3::int
       RETURNING count`,
      [subject, day, limit],
    );
    if (taken) return { type: 'granted', count: Number(taken.count) };
    const [current] = await this.query('SELECT count FROM drips WHERE subject = $1 AND day = $2', [subject, day]);
    return { type: 'limit_reached', count: Number(current?.count ?? 0) };
  }

  async releaseDrip(subject: string, day: string): Promise<void> {
    await this.query('UPDATE drips SET count = count - 1 WHERE subject = $1 AND day = $2 AND count > 0', [
      subject,
      day,
    ]);
  }

  async saveOrder(o: OrderRecord): Promise<void> {
    await this.query(
      `INSERT INTO orders (order_id, service_id, link, quantity, charge_usd, status, payer, payment_key, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
       ON CONFLICT (order_id) DO UPDATE SET status = EXCLUDED.status, updated_at = EXCLUDED.updated_at`,
      [
        o.orderId,
        o.serviceId,
        o.link,
        o.quantity,
        o.chargeUsd,
        o.status,
        o.payer,
        o.paymentKey,
        o.createdAt,
        o.updatedAt,
      ],
    );
  }

  async getOrder(orderId: string): Promise<OrderRecord | undefined> {
    const [row] = await this.query('SELECT * FROM orders WHERE order_id = $1', [orderId]);
    return row ? rowToOrder(row) : undefined;
  }
}
