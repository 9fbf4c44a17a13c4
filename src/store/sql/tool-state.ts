/** Tool state (testnet-fund's daily drips, the social-marketing orders) over the SQL port, one SQL text for both dialects. */
import type { DripClaimResult, OrderRecord, ToolState } from '../tool-state.js';
import type { SqlPort } from './port.js';
import { orderFromRow } from './rows.js';

/** One statement: the first drip of the day, or one more only while under the limit (the row or write lock serializes callers). */
async function claimDrip(port: SqlPort, subject: string, day: string, limit: number): Promise<DripClaimResult> {
  const { rows } = await port.write(
    `INSERT INTO drips (subject, day, count) SELECT ?, ?, 1 WHERE CAST(? AS INTEGER) > 0
     ON CONFLICT (subject, day) DO UPDATE SET count = drips.count + 1 WHERE drips.count < CAST(? AS INTEGER)
     RETURNING count`,
    [subject, day, limit, limit],
  );
  if (rows[0]) return { type: 'granted', count: Number(rows[0].count) };
  const [current] = await port.read('SELECT count FROM drips WHERE subject = ? AND day = ?', [subject, day]);
  return { type: 'limit_reached', count: Number(current?.count ?? 0) };
}

async function saveOrder(port: SqlPort, o: OrderRecord): Promise<void> {
  await port.write(
    `INSERT INTO orders (order_id, service_id, link, quantity, charge_usd, status, payer, replay_key, created_at, updated_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (order_id) DO UPDATE SET status = excluded.status, updated_at = excluded.updated_at`,
    [o.orderId, o.serviceId, o.link, o.quantity, o.chargeUsd, o.status, o.payer, o.replayKey, o.createdAt, o.updatedAt],
  );
}

/** Tool state over a SQL port. */
export function sqlToolState(port: SqlPort): ToolState {
  return {
    claimDrip: (subject, day, limit) => claimDrip(port, subject, day, limit),
    releaseDrip: async (subject, day) => {
      await port.write('UPDATE drips SET count = count - 1 WHERE subject = ? AND day = ? AND count > 0', [
        subject,
        day,
      ]);
    },
    saveOrder: (order) => saveOrder(port, order),
    getOrder: async (orderId) => {
      const [row] = await port.read('SELECT * FROM orders WHERE order_id = ?', [orderId]);
      return row ? orderFromRow(row) : undefined;
    },
  };
}
