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
import { LANDED_SEARCH_SKEW_MS, type LandedClaim, type LandedClaims } from './landed-claims.js';
import { BATCH_OPERATION_PREFIX, BATCH_SCHEME, batchOperationKind } from './kinds.js';

/** What the operation rows use of the ledger. */
export type OperationLedger = Pick<
  PaymentLedger,
  | 'claimPayment'
  | 'markPaymentPending'
  | 'completePayment'
  | 'releasePending'
  | 'listPending'
  | 'listReceipts'
  | 'durable'
>;

/**
 * How far before the oldest abandoned claim the receipts that already name a claim transaction are read: further back
 * than the chain search reaches, so every transaction it can find that a receipt names is known.
 */
const LOOKBACK_MS = LANDED_SEARCH_SKEW_MS + 5 * 60_000;

/** What one operation moves: its amount, and the channel for a refund. */
export interface OperationDetail {
  amount: bigint;
  channel?: { channelId: string; payer: string; cumulativeAmount: string };
  /** A claim's channels (lower-case ids): what names its transaction if its process stops before the answer. */
  claims?: readonly string[];
}

/** An operation left pending by a stopped process, as its row records it; a claim found on chain has its transaction. */
export interface Abandoned {
  kind: BatchOperation;
  amount: bigint;
  transaction?: string;
}

/** What an operation row stores as its payload (JSON): which round it belongs to. */
interface OperationPayload {
  type: 'batch-operation';
  token: string;
  receiver: string;
  claims?: readonly string[];
}

/** The channels an operation row recorded for its claim (none for rows written before they were recorded). */
function claimsOf(p: PendingRecord): string[] {
  const claims = (p.payload as Partial<OperationPayload> | null)?.claims;
  return Array.isArray(claims) ? claims.filter((id): id is string => typeof id === 'string') : [];
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
    const payload: OperationPayload = {
      type: 'batch-operation',
      token,
      receiver,
      ...(op.claims && { claims: op.claims }),
    };
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
   * a stopped process: a claim whose transaction `landed` finds on chain (and no receipt names yet) becomes its settled
   * receipt; anything else fails as `<kind>_abandoned` (no transaction we did not see is ever named). Returns them.
   */
  async closeAbandoned(before: number, landed?: LandedClaims): Promise<Abandoned[]> {
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
    const found = await this.landedFor(left, landed);
    const closed: Abandoned[] = [];
    for (const p of left) {
      const kind = batchOperationKind(p.replayKey) as BatchOperation;
      const row: ReceiptRecord = { ...p, status: 'failed', transaction: '', kind, createdAt: p.createdAt };
      const onChain = found.get(p.replayKey);
      if (onChain) {
        await this.settled({ ...row, amount: onChain.amount.toString() }, onChain.transaction);
        closed.push({ kind, amount: onChain.amount, transaction: onChain.transaction });
        this.log.warn('a claim left pending by a stopped process landed on chain; recorded with its transaction', {
          key: p.replayKey,
          transaction: onChain.transaction,
        });
        continue;
      }
      await this.failed(row, `${kind}_abandoned`);
      closed.push({ kind, amount: BigInt(p.amount) });
      this.log.warn('a batch-settlement operation left pending by a stopped process is closed; this round redoes it', {
        key: p.replayKey,
        kind,
      });
    }
    return closed;
  }

  /**
   * The landed claim transaction of each abandoned claim row, where it is unambiguous: the one transaction found on
   * chain since the row (that no claim or refund receipt names) whose `Claimed` channels are all among the row's. A
   * chain that cannot be asked, or a row that did not record its channels, names none (it closes as abandoned).
   */
  private async landedFor(left: readonly PendingRecord[], landed?: LandedClaims): Promise<Map<string, LandedClaim>> {
    const named = new Map<string, LandedClaim>();
    const rows = left.filter((p) => batchOperationKind(p.replayKey) === 'claim' && claimsOf(p).length > 0);
    if (!landed || rows.length === 0) return named;
    const since = Math.min(...rows.map((p) => Date.parse(p.createdAt)));
    let candidates: LandedClaim[];
    try {
      const recorded = await this.ledger.listReceipts({
        since: new Date(since - LOOKBACK_MS).toISOString(),
        kinds: ['claim', 'refund'],
        limit: 100_000,
      });
      const seen = new Set(recorded.map((r) => r.transaction.toLowerCase()));
      candidates = (await landed(since)).filter((c) => !seen.has(c.transaction));
    } catch (err) {
      this.log.warn('the chain could not be asked for claims left unanswered; they close as abandoned', {
        network: this.scope.network,
        error: String((err as Error)?.message ?? err),
      });
      return named;
    }
    for (const p of rows) {
      const mine = new Set(claimsOf(p));
      const match = candidates.filter((c) => c.channels.length > 0 && c.channels.every((id) => mine.has(id)));
      if (match.length === 1) named.set(p.replayKey, match[0]!);
    }
    return named;
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
