import { FacilitatorTimeoutError } from '@x402/core/server';
import { VerifyError, type PaymentPayload, type PaymentRequirements, type SettleResponse } from '@x402/core/types';
import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import type { ReceiptRecord, Store, Transport } from '../store/store.js';
import type { AnyPaidToolDefinition } from '../tool.js';
import type { RawPayment } from './decode.js';
import type { Facilitator } from './facilitator.js';
import {
  REASONS,
  openSettlement,
  pendingReceipt,
  type BeginOutcome,
  type PaymentRejection,
  type PaymentTicket,
  type SettleOutcome,
} from './outcomes.js';
import { RAILS } from './rails/index.js';
import type { Rail } from './rails/rail.js';
import { PaymentReader } from './reader.js';
import { Reconciler } from './reconcile.js';
import type { Challenge } from './requirements.js';
import { MppGate } from './mpp/gate.js';

/** The first line of a library's error message, bounded: callers get the gist, never a dump of RPC internals. */
function firstLine(message: string): string {
  const line = message.split('\n', 1)[0]!.trim();
  return line.length > 200 ? `${line.slice(0, 197)}...` : line;
}

/** Verifies payments before a handler runs and settles them after it succeeded; outcomes are values. */
export class PaymentBroker {
  /** Reads payments: decodes, matches against each tool's challenge, finds the rail and replay key. */
  private readonly reader: PaymentReader;
  /** Finishes settlements whose outcome was unknown. */
  readonly reconciler: Reconciler;
  /** The Machine Payments Protocol beside x402: its credentials become x402 payments of this broker. */
  readonly mpp: MppGate;

  constructor(
    private readonly config: Config,
    private readonly store: Store,
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
    this.reconciler = new Reconciler(config, store, log, resettle, rails);
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
    return ticket.idempotencyId ? this.admitIdempotent(tool, ticket) : this.admit(tool, ticket);
  }

  /** Settles a verified payment after the handler succeeded; records the receipt whatever happens. */
  async settle(tool: AnyPaidToolDefinition, ticket: PaymentTicket, output: unknown): Promise<SettleOutcome> {
    // The claim (with what it pays for) is on disk before any money can move, so a crash after the settlement is
    // always reconciled. A store that cannot say so refuses to settle: the claim is released, nothing is charged.
    try {
      await this.store.durable();
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
        errorReason: REASONS.settlementUnknown,
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
          this.store.finishIdempotent(ticket.idempotencyId!, { output, receipt: { ...result } }),
        );
      return { type: 'settled', receipt: result };
    }
    if (ticket.idempotencyId) await this.quietly(() => this.store.abandonIdempotent(ticket.idempotencyId!));
    if (result.errorReason === REASONS.settlementPending || result.errorReason === REASONS.settlementUnknown) {
      const { payload, requirements, requestHash } = ticket;
      await this.store.markPaymentPending(ticket.replayKey, {
        transaction: result.transaction,
        payload,
        requirements,
        requestHash,
        output,
      });
      return { type: 'pending', receipt: result };
    }
    await this.store.releasePayment(ticket.replayKey);
    await this.quietly(() => this.store.recordReceipt(this.receiptOf(ticket, result)));
    return {
      type: 'failed',
      receipt: result,
      challenge: this.challenge(tool, result.errorReason ?? 'settlement_failed'),
    };
  }

  /** Releases a claim whose call did not succeed, so nothing is settled and the authorization stays usable. */
  async release(ticket: PaymentTicket): Promise<void> {
    await this.store.releasePayment(ticket.replayKey);
    if (ticket.idempotencyId) await this.quietly(() => this.store.abandonIdempotent(ticket.idempotencyId!));
  }

  /** Binds the client's id to this request and payment before anything runs; a known id returns its stored result. */
  private async admitIdempotent(tool: AnyPaidToolDefinition, ticket: PaymentTicket): Promise<BeginOutcome> {
    const id = ticket.idempotencyId!;
    const expiresAt = new Date(Date.now() + this.config.idempotencyTtlSeconds * 1000).toISOString();
    const begun = await this.store.beginIdempotent({
      id,
      tool: tool.name,
      requestHash: ticket.requestHash,
      paymentKey: ticket.replayKey,
      expiresAt,
    });
    switch (begun.type) {
      case 'done':
        return {
          type: 'replayed',
          output: begun.result.output,
          receipt: begun.result.receipt as unknown as SettleResponse,
        };
      case 'in_flight':
        return this.reject(
          tool,
          409,
          REASONS.inFlight,
          'The first call with this payment id is still running; retry the same request in a few seconds to receive its result. Nothing was charged twice.',
        );
      case 'conflict':
        return this.reject(
          tool,
          409,
          REASONS.identifierConflict,
          begun.reason === 'different_request'
            ? 'This payment id was already used for a different request; use a new payment id (and a new payment) for a new request.'
            : 'This payment id was already used with a different payment; retry with the original payment, or use a new payment id.',
        );
      case 'new': {
        const outcome = await this.admit(tool, ticket);
        if (outcome.type !== 'verified') await this.quietly(() => this.store.abandonIdempotent(id));
        return outcome;
      }
    }
  }

  /** Claims the payment in the replay guard (reconciling a pending one first) and verifies it. */
  private async admit(tool: AnyPaidToolDefinition, ticket: PaymentTicket, reconciled = false): Promise<BeginOutcome> {
    const { requirements } = ticket;
    const details = { payload: ticket.payload, requirements, requestHash: ticket.requestHash };
    const claim = await this.store.claimPayment({
      key: ticket.replayKey,
      tool: tool.name,
      network: requirements.network,
      payer: ticket.payer,
      amount: requirements.amount,
      transport: ticket.transport,
      protocol: ticket.protocol ?? 'x402',
      details,
    });
    switch (claim.type) {
      case 'claimed':
        return this.verify(tool, ticket);
      case 'in_flight':
        return this.reject(
          tool,
          409,
          REASONS.inFlight,
          'This payment is already paying for a call that is still running; wait for that call, and sign a new authorization for any further call.',
        );
      case 'spent':
        if (claim.undelivered?.requestHash === ticket.requestHash) {
          return {
            type: 'replayed',
            output: claim.undelivered.output,
            receipt: this.settledReceipt(ticket, claim.transaction),
          };
        }
        return this.reject(
          tool,
          402,
          REASONS.alreadyUsed,
          `This payment was already used for a call (transaction ${claim.transaction || 'not reported'}); sign a new authorization to pay for another call.`,
        );
      case 'pending': {
        const result = reconciled ? ({ type: 'pending' } as const) : await this.reconciler.reconcile(claim.pending);
        switch (result.type) {
          case 'failed':
            return this.admit(tool, ticket, true);
          case 'settled':
            return this.admit(tool, ticket, true);
          case 'pending': {
            const open = openSettlement(claim.pending.transaction, claim.pending.network);
            return this.reject(tool, 409, open.reason, open.message);
          }
        }
      }
    }
  }

  private async verify(tool: AnyPaidToolDefinition, ticket: PaymentTicket): Promise<BeginOutcome> {
    try {
      const verified = await this.reader.server.verifyPayment(ticket.payload, ticket.requirements);
      if (verified.isValid) return { type: 'verified', ticket: { ...ticket, payer: verified.payer ?? ticket.payer } };
      await this.store.releasePayment(ticket.replayKey);
      return this.notVerified(tool, verified.invalidReason, verified.invalidMessage);
    } catch (err) {
      await this.store.releasePayment(ticket.replayKey);
      if (err instanceof VerifyError) return this.notVerified(tool, err.invalidReason, err.invalidMessage);
      // Anything else is the facilitator failing (timeout, unreachable, 5xx, unreadable answer), not the payment.
      const timedOut = err instanceof FacilitatorTimeoutError;
      this.log.warn('facilitator unavailable during verify', {
        tool: tool.name,
        error: String((err as Error)?.message ?? err),
      });
      const what = timedOut ? 'did not answer in time' : 'failed or answered something unreadable';
      return this.reject(
        tool,
        502,
        REASONS.facilitatorUnavailable,
        `The payment facilitator ${what}; nothing was charged and the tool did not run. Retry the same payment shortly.`,
      );
    }
  }

  private notVerified(
    tool: AnyPaidToolDefinition,
    invalidReason: string | undefined,
    detail: string | undefined,
  ): PaymentRejection {
    const reason = invalidReason ?? REASONS.malformed;
    const status = reason === 'permit2_allowance_required' ? 412 : 402;
    return this.reject(
      tool,
      status,
      reason,
      `The payment did not verify (${reason})${detail ? `: ${firstLine(detail)}` : ''}. Sign a new authorization for one of the accepted options.`,
    );
  }

  private async complete(ticket: PaymentTicket, result: SettleResponse): Promise<void> {
    const receipt = this.receiptOf(ticket, result);
    for (let attempt = 1; ; attempt++) {
      try {
        await this.store.completePayment(receipt);
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

  private settledReceipt(ticket: PaymentTicket, transaction: string): SettleResponse {
    return {
      success: true,
      transaction,
      network: ticket.requirements.network,
      payer: ticket.payer,
      amount: ticket.requirements.amount,
    };
  }

  private receiptOf(ticket: PaymentTicket, result: SettleResponse): ReceiptRecord {
    return {
      key: ticket.replayKey,
      tool: ticket.tool,
      network: ticket.requirements.network,
      payer: result.payer ?? ticket.payer,
      amount: result.amount ?? ticket.requirements.amount,
      transaction: result.transaction,
      status: result.success ? 'settled' : 'failed',
      ...(result.errorReason ? { errorReason: result.errorReason } : {}),
      transport: ticket.transport,
      protocol: ticket.protocol ?? 'x402',
      createdAt: new Date().toISOString(),
    };
  }

  private reject(
    tool: AnyPaidToolDefinition,
    status: PaymentRejection['status'],
    reason: string,
    message: string,
  ): PaymentRejection {
    return this.reader.reject(tool, status, reason, message);
  }
}
