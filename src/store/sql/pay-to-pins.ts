/** What the agent knows of each seller's origin: its day's spending, its last settled prices, its pinned pay-to addresses. */
import type { PayToPin, SpendLedger } from '../../shared/spends.js';
import type { SqlPort } from './port.js';

/** Statuses whose amount counts against the day's budget. */
const COUNTED = "status IN ('reserved', 'settled', 'pending')";
/** Settled payments looked through for the last price of one URL path. */
const RECENT = 200;

/** Millionths of a dollar the origin's payments count against `day`. */
export async function originSpentOn(port: SqlPort, origin: string, day: string): Promise<number> {
  const [row] = await port.read(
    `SELECT COALESCE(SUM(usd_micros), 0) AS total FROM agent_spends WHERE day = ? AND origin = ? AND ${COUNTED}`,
    [day, origin],
  );
  return Number(row?.total ?? 0);
}

/** The path of a URL (without its query), or undefined when it is not one. */
function pathOf(resource: string): string | undefined {
  try {
    return new URL(resource).pathname;
  } catch {
    return undefined;
  }
}

async function lastSettledPrice(
  port: SqlPort,
  tool: string,
  origin: string,
  path: string,
): Promise<number | undefined> {
  const rows = await port.read(
    `SELECT resource, usd_micros FROM agent_spends WHERE tool = ? AND origin = ? AND status = 'settled'
     ORDER BY created_at DESC, seq DESC LIMIT ?`,
    [tool, origin, RECENT],
  );
  const row = rows.find((r) => pathOf(String(r.resource)) === path);
  return row ? Number(row.usd_micros) : undefined;
}

async function pinPayTo(port: SqlPort, pin: PayToPin, replace: boolean): Promise<string> {
  const now = new Date().toISOString();
  // A replaced pin is kept until the payment that replaced it goes out, to be put back if it never does.
  const onConflict = replace
    ? `DO UPDATE SET pay_to = excluded.pay_to, spend_id = excluded.spend_id, updated_at = excluded.updated_at,
         replaced_pay_to = CASE WHEN agent_pay_to_pins.spend_id IS NULL THEN agent_pay_to_pins.pay_to
           ELSE agent_pay_to_pins.replaced_pay_to END`
    : 'DO NOTHING';
  await port.write(
    `INSERT INTO agent_pay_to_pins (origin, network, pay_to, spend_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)
     ON CONFLICT (origin, network) ${onConflict}`,
    [pin.origin, pin.network, pin.payTo, pin.spendId ?? null, now, now],
  );
  return (await payToPin(port, pin.origin, pin.network)) ?? pin.payTo;
}

/** Makes the pin held by a payment final: the payment went out (settled, or pending with its outcome unknown). */
export async function keepPin(port: SqlPort, spendId: string): Promise<void> {
  await port.write(
    'UPDATE agent_pay_to_pins SET spend_id = NULL, replaced_pay_to = NULL, updated_at = ? WHERE spend_id = ?',
    [new Date().toISOString(), spendId],
  );
}

/**
 * Gives up the pin held by a payment that never went out (released or failed): another live payment to the same
 * address takes it over, else the pin it replaced comes back, else it is dropped.
 */
export async function dropPin(port: SqlPort, spendId: string): Promise<void> {
  const [pin] = await port.read(
    'SELECT origin, network, pay_to, replaced_pay_to FROM agent_pay_to_pins WHERE spend_id = ?',
    [spendId],
  );
  if (!pin) return;
  const now = new Date().toISOString();
  const [heir] = await port.read(
    `SELECT id, status FROM agent_spends WHERE origin = ? AND network = ? AND pay_to = ? AND id <> ?
       AND status IN ('reserved', 'settled', 'pending') ORDER BY created_at ASC, seq ASC LIMIT 1`,
    [pin.origin, pin.network, pin.pay_to, spendId],
  );
  if (heir) {
    const holder = heir.status === 'reserved' ? String(heir.id) : null;
    await port.write('UPDATE agent_pay_to_pins SET spend_id = ?, updated_at = ? WHERE spend_id = ?', [
      holder,
      now,
      spendId,
    ]);
  } else if (pin.replaced_pay_to) {
    await port.write(
      'UPDATE agent_pay_to_pins SET pay_to = replaced_pay_to, replaced_pay_to = NULL, spend_id = NULL, updated_at = ? WHERE spend_id = ?',
      [now, spendId],
    );
  } else await port.write('DELETE FROM agent_pay_to_pins WHERE spend_id = ?', [spendId]);
}

async function payToPin(port: SqlPort, origin: string, network: string): Promise<string | undefined> {
  const [row] = await port.read('SELECT pay_to FROM agent_pay_to_pins WHERE origin = ? AND network = ?', [
    origin,
    network,
  ]);
  return row ? String(row.pay_to) : undefined;
}

/** The per-origin part of the agent's spending ledger over a SQL port. */
export function payToPins(
  port: SqlPort,
): Pick<SpendLedger, 'originSpentOn' | 'lastSettledPrice' | 'payToPin' | 'pinPayTo'> {
  return {
    originSpentOn: (origin, day) => originSpentOn(port, origin, day),
    lastSettledPrice: (tool, origin, path) => lastSettledPrice(port, tool, origin, path),
    payToPin: (origin, network) => payToPin(port, origin, network),
    pinPayTo: (pin, replace) => pinPayTo(port, pin, replace),
  };
}
