/** The replay guard and pending settlements of the payment ledger, over the SQL port (one SQL text for both dialects). */
import type { PaymentClaim, PaymentClaimResult, PendingDetails, PendingRecord, ReceiptRecord } from '../ledger.js';
import type { SqlPort, Statement } from './port.js';
import { insertReceiptSelect } from './receipts.js';
import { fromJson, json, pendingFromRow } from './rows.js';

/** What a claim that is already held answers, from its row. */
function held(row: Record<string, unknown>): PaymentClaimResult {
  switch (row.status) {
    case 'spent': {
      const transaction = String(row.transaction_id ?? '');
      // Completed after being pending: the output that was never delivered goes to a retry of the same request.
      const output = fromJson(row.output);
      if (output === undefined) return { type: 'spent', transaction };
      return { type: 'spent', transaction, undelivered: { requestHash: String(row.request_hash), output } };
    }
    case 'pending':
      return { type: 'pending', pending: pendingFromRow(row) };
    default:
      return { type: 'in_flight' };
  }
}

/** Inserts the claim, or reads the row that holds its replay key (claiming again if it was released in between). */
export async function claimPayment(port: SqlPort, claim: PaymentClaim): Promise<PaymentClaimResult> {
  const now = new Date().toISOString();
  for (;;) {
    const inserted = await port.write(
      `INSERT INTO payment_claims (replay_key, status, tool, network, payer, amount, transport, protocol, payload,
         requirements, request_hash, owner, created_at, updated_at)
       VALUES (?, 'claimed', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (replay_key) DO NOTHING RETURNING replay_key`,
      [
        claim.replayKey,
        claim.tool,
        claim.network,
        claim.payer,
        claim.amount,
        claim.transport,
        claim.protocol ?? 'x402',
        json(claim.details?.payload),
        json(claim.details?.requirements),
        claim.details?.requestHash ?? null,
        claim.owner ?? null,
        now,
        now,
      ],
    );
    if (inserted.rows.length === 1) {
      // The claim must be on disk before its settlement: start now, while the payment is verified and the tool runs.
      if (claim.syncEarly !== false) port.durable().catch(() => undefined);
      return { type: 'claimed' };
    }
    const [row] = await port.read('SELECT * FROM payment_claims WHERE replay_key = ?', [claim.replayKey]);
    if (row) return held(row);
  }
}

/** Marks the payment spent (recording it spent if it was never claimed here) and stores its receipt, once. */
export async function completePayment(port: SqlPort, receipt: ReceiptRecord): Promise<void> {
  // A pending payment keeps its request hash and output (undelivered); payload and requirements are done with.
  const moved: Statement = {
    sql: `INSERT INTO payment_claims (replay_key, status, tool, network, payer, amount, transport, protocol, transaction_id,
            created_at, updated_at)
          VALUES (?, 'spent', ?, ?, ?, ?, ?, ?, ?, ?, ?)
          ON CONFLICT (replay_key) DO UPDATE SET status = 'spent', transaction_id = excluded.transaction_id,
            updated_at = excluded.updated_at, payload = NULL, requirements = NULL
          WHERE payment_claims.status <> 'spent'
          RETURNING replay_key`,
    args: [
      receipt.replayKey,
      receipt.tool,
      receipt.network,
      receipt.payer,
      receipt.amount,
      receipt.transport,
      receipt.protocol ?? 'x402',
      receipt.transaction,
      receipt.createdAt,
      receipt.createdAt,
    ],
  };
  await port.writeThen(moved, insertReceiptSelect(receipt));
}

/** Deletes a claim that is still only claimed. */
export async function releasePayment(port: SqlPort, replayKey: string): Promise<void> {
  await port.write("DELETE FROM payment_claims WHERE replay_key = ? AND status = 'claimed'", [replayKey]);
}

/** Keeps a claimed (or pending) payment as pending, with what finishing it needs. */
export async function markPaymentPending(port: SqlPort, replayKey: string, details: PendingDetails): Promise<void> {
  await port.write(
    `UPDATE payment_claims SET status = 'pending', transaction_id = ?, payload = ?, requirements = ?, request_hash = ?,
       output = ?, updated_at = ?
     WHERE replay_key = ? AND status IN ('claimed', 'pending')`,
    [
      details.transaction,
      json(details.payload),
      json(details.requirements),
      details.requestHash,
      json(details.output),
      new Date().toISOString(),
      replayKey,
    ],
  );
}

/** Releases a payment still pending and stores its failed receipt; one completed meanwhile stays spent. */
export async function releasePending(port: SqlPort, receipt: ReceiptRecord): Promise<void> {
  const released: Statement = {
    sql: "DELETE FROM payment_claims WHERE replay_key = ? AND status = 'pending' RETURNING replay_key",
    args: [receipt.replayKey],
  };
  await port.writeThen(released, insertReceiptSelect(receipt));
}

/** Pending settlements, oldest first. */
export async function listPending(port: SqlPort): Promise<PendingRecord[]> {
  const rows = await port.read(
    "SELECT * FROM payment_claims WHERE status = 'pending' ORDER BY created_at, updated_at, replay_key",
  );
  return rows.map(pendingFromRow);
}

/** Claims last touched before `before` whose call never ended, oldest first. */
export async function listStaleClaims(port: SqlPort, before: string): Promise<PendingRecord[]> {
  const rows = await port.read(
    "SELECT * FROM payment_claims WHERE status = 'claimed' AND updated_at < ? ORDER BY created_at, replay_key",
    [before],
  );
  return rows.map(pendingFromRow);
}
