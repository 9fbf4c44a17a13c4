import type { PaymentPayload, PaymentRequirements, SettleResponse } from '@x402/core/types';
import type { Config } from '../config.js';
import type { PaymentCode } from '../errors.js';
import type { Logger } from '../log.js';
import type { PaymentLedger, Transport } from '../store/ledger.js';
import type { AnyPaidToolDefinition } from '../tool.js';
import { PaymentClaims } from './claim.js';
import type { RawPayment } from './decode.js';
import type { Facilitator } from './facilitator.js';
import { MppGate } from './mpp/gate.js';
import { pendingReceipt, type BeginOutcome, type PaymentTicket, type SettleOutcome } from './outcomes.js';
import { RAILS } from './rails/index.js';
import type { Rail } from './rails/rail.js';
import { PaymentReader } from './reader.js';
import { firstLine, receiptOf } from './receipt-records.js';
import { Reconciler } from './reconcile.js';
import type { Challenge } from './requirements.js';

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
    rails: readonly Rail[] = RAILS,
  ) {
    this.mpp = new MppGate(config.mpp, config.networks, (tool) => this.reader.challengeOf(tool), log);
    this.reader = new PaymentReader(config, facilitator, tools, rails, this.mpp);
    const resettle = async (payload: PaymentPayload, requirements: PaymentRequirements) => {
      await this.reader.prepareRail(requirements);
      return this.reader.server.settlePayment(payload, requirements);
    };
    this.reconciler = new Reconciler(config, ledger, log, resettle, rails);
    this.claims = new PaymentClaims(config, ledger, this.reader, this.reconciler, log);
  }

  /** The tool's challenge, with `error` set to the given reason. */
  challenge(tool: AnyPaidToolDefinition, error?: string): Challenge {
    return this.reader.challenge(tool, error);
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
    return this.claims.claim(tool, ticket);
  }

  /** Settles a verified payment after the handler succeeded; records the receipt whatever happens. */
  async settle(tool: AnyPaidToolDefinition, ticket: PaymentTicket, output: unknown): Promise<SettleOutcome> {
    // The claim (with what it pays for) is on disk before any money can move, so a crash after the settlement is
    // always reconciled. A store that cannot say so refuses to settle: the claim is released, nothing is charged.
    try {
      await this.ledger.durable();
    } catch (err) {
      await this.release(ticket).catch(() => undefined);
      throw err;
    }
    let result: SettleResponse;
    try {
      result = await this.reader.server.settlePayment(ticket.payload, ticket.requirements);
    } catch (err) {
      // Timeout or dropped connection: the money may or may not have moved. Keep the claim and the output.
      this.log.error('settlement outcome unknown', {
        tool: tool.name,
        network: ticket.requirements.network,
        payer: ticket.payer,
        error: (err as Error).message,
      });
      result = {
        success: false,
        errorReason: 'settlement_outcome_unknown' satisfies PaymentCode,
        errorMessage: (err as Error).message,
        transaction: '',
        network: ticket.requirements.network,
        payer: ticket.payer,
      };
    }
    if (result.errorMessage) result = { ...result, errorMessage: firstLine(result.errorMessage) };
    result = pendingReceipt(result, ticket.requirements.network);
    if (result.success) {
      await this.complete(ticket, result);
      if (ticket.idempotencyId)
        await this.quietly(() =>
          this.ledger.completeIdempotency(ticket.idempotencyId!, { output, receipt: { ...result } }),
        );
      return { type: 'settled', receipt: result };
    }
    if (ticket.idempotencyId) await this.quietly(() => this.ledger.releaseIdempotency(ticket.idempotencyId!));
    if (result.errorReason === 'settlement_pending' || result.errorReason === 'settlement_outcome_unknown') {
      const { payload, requirements, requestHash } = ticket;
      await this.ledger.markPaymentPending(ticket.replayKey, {
        transaction: result.transaction,
        payload,
        requirements,
        requestHash,
        output,
      });
      return { type: 'pending', receipt: result };
    }
    await this.ledger.releasePayment(ticket.replayKey);
    await this.quietly(() => this.ledger.recordReceipt(receiptOf(ticket, result)));
    return {
      type: 'failed',
      receipt: result,
      challenge: this.challenge(tool, result.errorReason ?? 'settlement_failed'),
    };
  }

  /** Releases a claim whose call did not succeed, so nothing is settled and the authorization stays usable. */
  async release(ticket: PaymentTicket): Promise<void> {
    await this.ledger.releasePayment(ticket.replayKey);
    if (ticket.idempotencyId) await this.quietly(() => this.ledger.releaseIdempotency(ticket.idempotencyId!));
  }

  private async complete(ticket: PaymentTicket, result: SettleResponse): Promise<void> {
    const receipt = receiptOf(ticket, result);
    for (let attempt = 1; ; attempt++) {
      try {
        await this.ledger.completePayment(receipt);
        return;
      } catch (err) {
        this.log.error('could not store a settled receipt', { attempt, receipt, error: (err as Error).message });
        if (attempt >= 5) return;
        await new Promise((r) => setTimeout(r, 50 * attempt));
      }
    }
  }

  private async quietly(action: () => Promise<unknown>): Promise<void> {
    try {
      await action();
    } catch (err) {
      this.log.error('store write failed', { error: (err as Error).message });
    }
  }
}
