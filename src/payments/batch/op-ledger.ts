/**
 * The ledger rows of the claim loop's operations (claim, settle, refund). Each is written `pending`, durably, before
 * the facilitator is asked, so an operation under way — or one left by a process that stopped — is listed in doubt
 * (`tollbooth receipts`, /metrics); the answer turns the same row into a receipt: settled with its transaction, or
 * failed with our own reason. A row still pending once no round can be running it any more (older than the round
 * lease) was left by a stopped process: the next round of its (network, token) closes it (docs/payments.md).
 */
import { randomUUID } from 'node:crypto';
import type { BatchOperation } from '../../observe/metrics-batch.js';
import type { Logger } from '../../shared/log.js';
import type { PaymentLedger, PendingRecord, ReceiptRecord } from '../../store/ledger.js';
import { BATCH_OPERATION_PREFIX, BATCH_SCHEME, batchOperationKind } from './kinds.js';

/** What the operation rows use of the ledger. */
export type OperationLedger = Pick<
  PaymentLedger,
  'claimPayment' | 'markPaymentPending' | 'completePayment' | 'releasePending' | 'listPending' | 'durable'
>;

/** What one operation moves: its amount, and the channel for a refund. */
export interface OperationDetail {
  amount: bigint;
  channel?: { channelId: string; payer: string; cumulativeAmount: string };
}

/** An operation left pending by a stopped process, as its row records it. */
export interface Abandoned {
  kind: BatchOperation;
  amount: bigint;
}

/** What an operation row stores as its payload (JSON): which round it belongs to. */
interface OperationPayload {
  type: 'batch-operation';
  token: string;
  receiver: string;
}

/** The pending rows of the claim loop's operations, from the ledger's pending settlements. */
export function pendingOperations(pending: readonly PendingRecord[]): PendingRecord[] {
  return pending.filter((p) => batchOperationKind(p.replayKey) !== undefined);
}

/** The operation rows of one round: (network, token, receiver). */
export class OperationRows {
  /** Receipts whose operation ended but which the store refused: written again at the next round. */
  private readonly unstored = new Map<string, ReceiptRecord>();

  constructor(
    private readonly ledger: OperationLedger,
    private readonly scope: { network: string; token: string; receiver: string },
    private readonly log: Logger,
  ) {}

  /** Writes the operation's row as pending, durably; throws (and nothing must be asked) when the store cannot. */
  async begin(kind: BatchOperation, op: OperationDetail): Promise<ReceiptRecord> {
    const { network, token, receiver } = this.scope;
    const receipt: ReceiptRecord = {
      replayKey: `${BATCH_OPERATION_PREFIX}${network}:${kind}:${randomUUID()}`,
      tool: 'batch-settlement',
      network,
      payer: op.channel?.payer ?? receiver,
      amount: op.amount.toString(),
      transaction: '',
      status: 'settled',
      transport: 'http',
      kind,
      ...(op.channel ? { channelId: op.channel.channelId, cumulativeAmount: op.channel.cumulativeAmount } : {}),
      createdAt: new Date().toISOString(),
    };
    const payload: OperationPayload = { type: 'batch-operation', token, receiver };
    const requirements = { scheme: BATCH_SCHEME, network, asset: token, payTo: receiver, amount: receipt.amount };
    const details = { payload, requirements, requestHash: '' };
    await this.ledger.claimPayment({ ...receipt, details });
    await this.ledger.markPaymentPending(receipt.replayKey, { transaction: '', ...details, output: null });
    await this.ledger.durable();
    return receipt;
  }

  /** Turns the pending row into a settled receipt with the transaction. */
  async settled(row: ReceiptRecord, transaction: string): Promise<void> {
    await this.end({ ...row, transaction, status: 'settled', createdAt: new Date().toISOString() }, 'complete');
  }

  /** Turns the pending row into a failed receipt with our reason (never the facilitator's text). */
  async failed(row: ReceiptRecord, reason: string): Promise<void> {
    const receipt: ReceiptRecord = {
      ...row,
      status: 'failed',
      errorReason: reason,
      createdAt: new Date().toISOString(),
    };
    await this.end(receipt, 'release');
  }

  /**
   * Writes the receipts the store refused before, then closes this round's rows left pending before `before` (ms) by
   * a stopped process as failed (`<kind>_abandoned`: no transaction we did not see is ever named); returns them.
   */
  async closeAbandoned(before: number): Promise<Abandoned[]> {
    for (const receipt of [...this.unstored.values()]) await this.end(receipt, 'complete');
    const { network, token, receiver } = this.scope;
    const left = pendingOperations(await this.ledger.listPending()).filter((p) => {
      const payload = p.payload as Partial<OperationPayload> | null;
      return (
        p.network === network &&
        payload?.token === token &&
        payload.receiver === receiver &&
        Date.parse(p.updatedAt) < before &&
        !this.unstored.has(p.replayKey)
      );
    });
    const closed: Abandoned[] = [];
    for (const p of left) {
      const kind = batchOperationKind(p.replayKey) as BatchOperation;
      const row: ReceiptRecord = { ...p, status: 'failed', transaction: '', kind, createdAt: p.createdAt };
      await this.failed(row, `${kind}_abandoned`);
      closed.push({ kind, amount: BigInt(p.amount) });
      this.log.warn('a batch-settlement operation left pending by a stopped process is closed; this round redoes it', {
        key: p.replayKey,
        kind,
      });
    }
    return closed;
  }

  private async end(receipt: ReceiptRecord, how: 'complete' | 'release'): Promise<void> {
    try {
      if (how === 'complete') await this.ledger.completePayment(receipt);
      else await this.ledger.releasePending(receipt);
      this.unstored.delete(receipt.replayKey);
    } catch (err) {
      if (how === 'complete') this.unstored.set(receipt.replayKey, receipt);
      this.log.error('recording a batch-settlement receipt failed; its row stays pending', {
        kind: receipt.kind,
        transaction: receipt.transaction,
        error: String((err as Error)?.message ?? err),
      });
    }
  }
}
