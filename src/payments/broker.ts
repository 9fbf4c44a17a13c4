import type { PaymentPayload, PaymentRequirements, SettleResponse } from '@x402/core/types';
import type { Config } from '../config/config.js';
import type { PaymentCode } from '../shared/errors.js';
import type { Logger } from '../shared/log.js';
import type { PaymentLedger, Transport } from '../store/ledger.js';
import { v2FaceOf } from '../tool/price.js';
import type { AnyPaidToolDefinition } from '../tool/tool.js';
import { PaymentClaims } from './ledger/claim.js';
import { decodePayment, type RawPayment, type X402RawPayment } from './reading/decode.js';
import type { Facilitator } from './facilitators/facilitator.js';
import { MppGate } from './mpp/gate.js';
import {
  openSettlement,
  pendingReceipt,
  type BeginOutcome,
  type PaymentTicket,
  type SettleOutcome,
} from './ledger/outcomes.js';
import { RAILS } from './rails/index.js';
import type { Rail } from './rails/rail.js';
import { PaymentReader } from './reading/reader.js';
import { receiptOf } from './ledger/receipt-records.js';
import { Reconciler } from './ledger/reconcile.js';
import type { Challenge, ChallengeBook } from './challenges/requirements.js';
import type { SettledOutbox } from './ledger/settled-outbox.js';
import { ownSettlement } from './ledger/verdicts.js';
import { BATCH_SCHEME, CUMULATIVE_MISMATCH, isVoucherPayment, isVoucherReceipt } from './batch/kinds.js';
import type { BatchSeller } from './batch/seller.js';
import { isRefundRequest, refundAcknowledgement, refundRefusal } from './batch/refund.js';

/** Verifies payments before a handler runs and settles them after it succeeded; outcomes are values. */
export class PaymentBroker {
  /** Reads payments: decodes, matches against each tool's challenge, finds the rail and replay key. */
  private readonly reader: PaymentReader;
  /** Finishes settlements whose outcome was unknown. */
  readonly reconciler: Reconciler;
  /** The Machine Payments Protocol beside x402: its credentials become x402 payments of this broker. */
  readonly mpp: MppGate;
  /** The ledger steps before the handler: idempotency, replay guard, verification. */
  private readonly claims: PaymentClaims;

  constructor(
    config: Config,
    private readonly ledger: PaymentLedger,
    facilitator: Facilitator,
    private readonly log: Logger,
    tools: readonly AnyPaidToolDefinition[],
    /** Keeps every settlement outcome until the store has it (journaled when the store refuses). */
    readonly outbox: SettledOutbox,
    /** What start-up learned from the facilitators' `/supported`: every challenge is built under it. */
    readonly book: ChallengeBook,
    rails: readonly Rail[] = RAILS,
    /** The batch-settlement schemes on the store's channels (BATCH_SETTLEMENT=on and a facilitator listing it). */
    private readonly batch?: BatchSeller,
  ) {
    // The gate and the reader need each other only at call time (the gate's offers come from the reader's challenges,
    // the reader hands MPP credentials to the gate): the gate gets the reader's challenges through `challengeOf`,
    // bound to the reader built on the next line, and refuses loudly if it is called before.
    let reader: PaymentReader | undefined;
    const challengeOf = (tool: AnyPaidToolDefinition) => {
      if (!reader) throw new Error('the MPP gate asked for a challenge before the payment reader was built');
      return reader.challengeOf(tool);
    };
    this.mpp = new MppGate(config.mpp, config.networks, challengeOf, log);
    this.reader = reader = new PaymentReader(config, facilitator, tools, rails, this.mpp, book, batch);
    const resettle = async (payload: PaymentPayload, requirements: PaymentRequirements) => {
      await this.reader.prepareRail(requirements);
      return this.reader.server.settlePayment(payload, requirements);
    };
    const owner = batch?.owner;
    this.reconciler = new Reconciler(config, ledger, log, resettle, rails, batch?.channels, owner?.gone);
    this.claims = new PaymentClaims(config, ledger, this.reader, this.reconciler, log, owner?.token);
  }

  /** The tool's challenge, with `error` set to the given reason. */
  challenge(tool: AnyPaidToolDefinition, error?: string): Challenge {
    return this.reader.challenge(tool, error);
  }

  /**
   * The x402 v2 face of a `base-v1` tool when this server offers batch settlement on Base (`exact` and
   * `batch-settlement` on `eip155:8453`, docs/payments.md): what a version-2 payment of the tool pays; else undefined.
   */
  v2Face(tool: AnyPaidToolDefinition): AnyPaidToolDefinition | undefined {
    const face = v2FaceOf(tool);
    return face && this.reader.challenge(face).accepts.length > 0 ? face : undefined;
  }

  /**
   * The challenge a refund probe gets (a bare GET on a paid POST route, docs/payments.md): the tool's
   * `batch-settlement` entries only, the one payment such a GET may carry; undefined when the tool offers none.
   */
  refundChallenge(tool: AnyPaidToolDefinition): Challenge | undefined {
    const challenge = this.reader.challenge(tool);
    if (challenge.x402Version !== 2) return undefined;
    const accepts = challenge.accepts.filter((entry) => entry.scheme === BATCH_SCHEME);
    return accepts.length > 0 ? { ...challenge, accepts } : undefined;
  }

  /** True when an x402 proof decodes to a `batch-settlement` refund request (which buys no call). */
  isRefundProof(raw: X402RawPayment): boolean {
    const decoded = decodePayment(raw);
    if (!decoded.ok || decoded.payload.x402Version !== 2) return false;
    return decoded.payload.accepted.scheme === BATCH_SCHEME && isRefundRequest(decoded.payload);
  }

  /** Reads, matches, claims and verifies a payment for one request; the handler may run only on `verified`. */
  async begin(
    tool: AnyPaidToolDefinition,
    raw: RawPayment,
    transport: Transport,
    requestHash: string,
  ): Promise<BeginOutcome> {
    const read = await this.reader.read(tool, raw);
    if (read.type === 'rejected') return read;
    const ticket: PaymentTicket = { ...read.ticket, transport, requestHash };
    const begun = await this.claims.claim(tool, ticket);
    // A voucher on another cumulative amount than ours + the price: the corrective 402 carries our channel state.
    if (begun.type === 'rejected' && begun.reason === CUMULATIVE_MISMATCH && this.batch)
      return { ...begun, challenge: await this.batch.corrective(begun.challenge, ticket.payload) };
    // A verified channel payment holds its channel while its call runs here (lease renewed until settle or release).
    if (begun.type === 'verified' && ticket.requirements.scheme === BATCH_SCHEME)
      this.batch?.hold(begun.ticket.payload, begun.ticket.requirements);
    // A channel's refund request buys no call: it is settled now (the refund transaction) and answered, no handler.
    if (begun.type === 'verified' && isRefundRequest(begun.ticket.payload)) return this.refund(tool, begun.ticket);
    return begun;
  }

  /** Settles a verified refund request and answers its acknowledgement in place of the tool's output. */
  private async refund(tool: AnyPaidToolDefinition, ticket: PaymentTicket): Promise<BeginOutcome> {
    const refused = this.batch && (await refundRefusal(this.batch.channels, ticket.payload));
    if (refused) {
      await this.release(ticket);
      const message = 'This channel has no such amount left to refund above what it was charged; nothing was sent.';
      return { type: 'rejected', status: 402, reason: refused, message, challenge: this.challenge(tool, refused) };
    }
    const acknowledgement = refundAcknowledgement(ticket.payload);
    const settled = await this.settle(tool, ticket, acknowledgement);
    if (settled.type === 'settled') return { type: 'replayed', output: acknowledgement, receipt: settled.receipt };
    const reason = settled.receipt.errorReason ?? 'settlement_failed';
    const message =
      settled.type === 'pending'
        ? openSettlement(settled.receipt.transaction, ticket.requirements.network).message
        : "The refund was not settled; the channel is unchanged. Ask again, or withdraw after the channel's delay.";
    return { type: 'rejected', status: 402, reason, message, challenge: this.challenge(tool, reason) };
  }

  /** Settles a verified payment after the handler succeeded; records the receipt whatever happens. */
  async settle(tool: AnyPaidToolDefinition, ticket: PaymentTicket, output: unknown): Promise<SettleOutcome> {
    // The claim (with what it pays for) is on disk before any money can move, so a crash after the settlement is
    // always reconciled. A store that cannot say so refuses to settle: the claim is released, nothing is charged.
    // A voucher moves no money here: its charge is a write to the same store, made durable itself after the claim's.
    try {
      if (!isVoucherPayment(ticket.requirements, ticket.payload)) await this.ledger.durable();
    } catch (err) {
      await this.release(ticket).catch(() => undefined);
      throw err;
    }
    // From the settle request until its outcome is kept, the claim is in doubt (counted in /metrics).
    try {
      return await this.outbox.settlingWhile(() => this.settleAndKeep(tool, ticket, output));
    } finally {
      this.batch?.letGo(ticket.payload);
    }
  }

  private async settleAndKeep(
    tool: AnyPaidToolDefinition,
    ticket: PaymentTicket,
    output: unknown,
  ): Promise<SettleOutcome> {
    const result = await this.settlement(tool, ticket);
    const { idempotencyId } = ticket;
    if (result.success) {
      const idempotency = idempotencyId ? { id: idempotencyId, result: { output, receipt: { ...result } } } : undefined;
      await this.outbox.keep({
        type: 'settled',
        receipt: receiptOf(ticket, result),
        ...(idempotency && { idempotency }),
      });
      return { type: 'settled', receipt: result };
    }
    if (result.errorReason === 'settlement_pending' || result.errorReason === 'settlement_outcome_unknown') {
      const { payload, requirements, requestHash } = ticket;
      await this.outbox.keep({
        type: 'pending',
        claim: {
          replayKey: ticket.replayKey,
          tool: ticket.tool,
          network: requirements.network,
          payer: ticket.payer,
          amount: requirements.amount,
          transport: ticket.transport,
          protocol: ticket.protocol ?? 'x402',
        },
        details: { transaction: result.transaction, payload, requirements, requestHash, output },
        ...(idempotencyId && { releaseIdempotency: idempotencyId }),
        at: new Date().toISOString(),
      });
      return { type: 'pending', receipt: result };
    }
    if (idempotencyId) await this.quietly(() => this.ledger.releaseIdempotency(idempotencyId));
    await this.ledger.releasePayment(ticket.replayKey);
    await this.quietly(() => this.ledger.recordReceipt(receiptOf(ticket, result)));
    return {
      type: 'failed',
      receipt: result,
      challenge: this.challenge(tool, result.errorReason ?? 'settlement_failed'),
    };
  }

  /**
   * Asks the facilitator to settle; a settlement without an answer, or "settled" without a transaction (which x402
   * allows only for a failure), is an outcome not known yet: the reconciler finds the transaction on chain.
   */
  private async settlement(tool: AnyPaidToolDefinition, ticket: PaymentTicket): Promise<SettleResponse> {
    let result: SettleResponse;
    try {
      const { payload, requirements } = ticket;
      result =
        requirements.scheme === BATCH_SCHEME && this.batch
          ? await this.batch.settle(payload, requirements, this.reader.server)
          : await this.reader.server.settlePayment(payload, requirements);
    } catch (err) {
      // Timeout or dropped connection: the money may or may not have moved. Keep the claim and the output.
      this.log.error('settlement outcome unknown', {
        tool: tool.name,
        network: ticket.requirements.network,
        payer: ticket.payer,
        error: (err as Error).message,
      });
      result = this.unknown(ticket, (err as Error).message);
    }
    // A voucher's charge is committed to the channel, not sent: its receipt has no transaction (the scheme says so).
    if (result.success && !result.transaction && !isVoucherReceipt(ticket.requirements, result)) {
      this.log.error('the facilitator reported a settlement without its transaction; finding it on chain', {
        tool: tool.name,
        network: ticket.requirements.network,
        payer: ticket.payer,
      });
      result = this.unknown(ticket, 'the facilitator reported success without a transaction');
    }
    // The caller gets our reason code and sentence and the payer we verified, never the facilitator's text (logged).
    const { network } = ticket.requirements;
    return ownSettlement(pendingReceipt(result, network), ticket.payer, this.log, { tool: tool.name, network });
  }

  private unknown(ticket: PaymentTicket, message: string): SettleResponse {
    return {
      success: false,
      errorReason: 'settlement_outcome_unknown' satisfies PaymentCode,
      errorMessage: message,
      transaction: '',
      network: ticket.requirements.network,
      payer: ticket.payer,
    };
  }

  /** Releases a claim whose call did not succeed, so nothing is settled and the authorization stays usable. */
  async release(ticket: PaymentTicket): Promise<void> {
    // A channel payment's reservation goes first: the channel stays as it was and the same voucher pays a retry.
    this.batch?.letGo(ticket.payload);
    if (ticket.requirements.scheme === BATCH_SCHEME && this.batch)
      await this.quietly(() => this.batch!.cancel(ticket.payload, ticket.requirements));
    await this.ledger.releasePayment(ticket.replayKey);
    if (ticket.idempotencyId) await this.quietly(() => this.ledger.releaseIdempotency(ticket.idempotencyId!));
  }

  private async quietly(action: () => Promise<unknown>): Promise<void> {
    try {
      await action();
    } catch (err) {
      this.log.error('store write failed', { error: (err as Error).message });
    }
  }
}
