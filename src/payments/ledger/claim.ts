import { FacilitatorTimeoutError } from '@x402/core/server';
import { VerifyError, type SettleResponse } from '@x402/core/types';
import type { Config } from '../../config/config.js';
import type { PaymentCode, RefusalStatus } from '../../shared/errors.js';
import type { Logger } from '../../shared/log.js';
import type { PaymentClaim, PaymentLedger } from '../../store/ledger.js';
import type { AnyPaidToolDefinition } from '../../tool/tool.js';
import { openSettlement, type BeginOutcome, type PaymentRejection, type PaymentTicket } from './outcomes.js';
import type { PaymentReader } from '../reading/reader.js';
import { settledReceipt } from './receipt-records.js';
import type { Reconciler } from './reconcile.js';
import { notVerifiedMessage, ownReason, samePayer } from './verdicts.js';
import { CUMULATIVE_MISMATCH, channelPayment, claimedPayload, isChannelKey, isVoucherPayment } from '../batch/kinds.js';

/** The ledger steps before a handler runs: bind the idempotency id, claim the payment in the replay guard, verify it. */
export class PaymentClaims {
  constructor(
    private readonly config: Config,
    private readonly ledger: PaymentLedger,
    private readonly reader: PaymentReader,
    private readonly reconciler: Reconciler,
    private readonly log: Logger,
    /** This process as the holder of the voucher claims it makes (batch/owner.ts), when batch settlement is on. */
    private readonly owner?: string,
  ) {}

  /** Claims and verifies a read payment; the handler may run only on `verified`. */
  claim(tool: AnyPaidToolDefinition, ticket: PaymentTicket): Promise<BeginOutcome> {
    return ticket.idempotencyId ? this.claimIdempotent(tool, ticket) : this.claimAndVerify(tool, ticket);
  }

  /** Binds the client's id to this request and payment before anything runs; a known id returns its stored result. */
  private async claimIdempotent(tool: AnyPaidToolDefinition, ticket: PaymentTicket): Promise<BeginOutcome> {
    const id = ticket.idempotencyId!;
    const expiresAt = new Date(Date.now() + this.config.idempotencyTtlSeconds * 1000).toISOString();
    const begun = await this.ledger.claimIdempotency({
      id,
      tool: tool.name,
      requestHash: ticket.requestHash,
      replayKey: ticket.replayKey,
      expiresAt,
    });
    switch (begun.type) {
      case 'done': {
        const receipt = begun.result.receipt as unknown as SettleResponse;
        // x402 allows an empty transaction only for a failed settlement: never replay "settled" without one.
        // (A voucher's receipt has none by the scheme's rule: its charge was committed to the channel, not sent.)
        if (receipt.success && !receipt.transaction && !isChannelKey(ticket.replayKey))
          return this.withoutTransaction(tool, ticket);
        return { type: 'replayed', output: begun.result.output, receipt };
      }
      case 'in_flight':
        return this.reject(
          tool,
          'payment_in_flight',
          'The first call with this payment id is still running; retry the same request in a few seconds to receive its result. It is charged at most once.',
        );
      case 'conflict':
        return this.reject(
          tool,
          'payment_identifier_conflict',
          begun.reason === 'different_request'
            ? 'This payment id was already used for a different request; use a new payment id (and a new payment) for a new request.'
            : 'This payment id was already used with a different payment; retry with the original payment, or use a new payment id.',
        );
      case 'new': {
        const outcome = await this.claimAndVerify(tool, ticket);
        if (outcome.type !== 'verified') await this.quietly(() => this.ledger.releaseIdempotency(id));
        return outcome;
      }
    }
  }

  /** Claims the payment in the replay guard (reconciling a pending one first) and verifies it. */
  private async claimAndVerify(
    tool: AnyPaidToolDefinition,
    ticket: PaymentTicket,
    reconciled = false,
  ): Promise<BeginOutcome> {
    const claim = await this.ledger.claimPayment(claimOf(tool, ticket, this.owner));
    switch (claim.type) {
      case 'claimed':
        return this.verify(tool, ticket);
      case 'in_flight':
        return this.inFlight(tool, ticket, reconciled);
      case 'spent':
        if (claim.undelivered?.requestHash === ticket.requestHash) {
          if (!claim.transaction && !isChannelKey(ticket.replayKey)) return this.withoutTransaction(tool, ticket);
          return {
            type: 'replayed',
            output: claim.undelivered.output,
            receipt: settledReceipt(ticket, claim.transaction),
          };
        }
        // A voucher already charged, sent again: the payer's channel state is behind ours (the answer of the call it
        // paid was lost). It gets the corrective 402 (our channel state) to resynchronise from, not a refusal it would
        // meet again with the same voucher on every later call. Nothing runs and nothing is charged either way.
        if (channelPayment(ticket.payload)?.type === 'voucher')
          return this.reject(tool, CUMULATIVE_MISMATCH, notVerifiedMessage(CUMULATIVE_MISMATCH), 402);
        return this.reject(
          tool,
          'payment_already_used',
          `This payment was already used for a call (transaction ${claim.transaction || 'not reported'}); sign a new authorization to pay for another call.`,
        );
      case 'pending': {
        const result = reconciled ? ({ type: 'pending' } as const) : await this.reconciler.reconcile(claim.pending);
        switch (result.type) {
          case 'failed':
            return this.claimAndVerify(tool, ticket, true);
          case 'settled':
            return this.claimAndVerify(tool, ticket, true);
          case 'pending': {
            const open = openSettlement(claim.pending.transaction, claim.pending.network);
            return this.reject(tool, open.reason, open.message);
          }
        }
      }
    }
  }

  /**
   * A payment whose claim is held by a call still running: refused (409), unless it is a voucher's claim a stopped
   * process left, which its channel decides now (released, or spent) before the payment is claimed again.
   */
  private async inFlight(
    tool: AnyPaidToolDefinition,
    ticket: PaymentTicket,
    reconciled: boolean,
  ): Promise<BeginOutcome> {
    const abandoned = reconciled ? undefined : await this.reconciler.abandonedVoucher(ticket.replayKey);
    if (abandoned && abandoned.type !== 'pending') return this.claimAndVerify(tool, ticket, true);
    return this.reject(
      tool,
      'payment_in_flight',
      'This payment is already paying for a call that is still running; wait for that call, and sign a new authorization for any further call.',
    );
  }

  /** A result recorded as settled without its transaction: not answered as settled until the chain names it. */
  private withoutTransaction(tool: AnyPaidToolDefinition, ticket: PaymentTicket): PaymentRejection {
    this.log.error('a settled payment has no transaction recorded; its result is held back until it is known', {
      tool: tool.name,
      key: ticket.replayKey,
      network: ticket.requirements.network,
    });
    const open = openSettlement('', ticket.requirements.network);
    return this.reject(tool, open.reason, open.message);
  }

  private async verify(tool: AnyPaidToolDefinition, ticket: PaymentTicket): Promise<BeginOutcome> {
    try {
      const verified = await this.reader.server.verifyPayment(ticket.payload, ticket.requirements);
      // The ticket keeps the payer we read off the payment; a facilitator naming another is logged, never believed.
      if (verified.payer && !samePayer(verified.payer, ticket.payer))
        this.log.warn('the facilitator named another payer than the one we read off the payment', {
          tool: tool.name,
          payer: ticket.payer,
          facilitatorPayer: verified.payer,
        });
      if (verified.isValid) return { type: 'verified', ticket };
      await this.ledger.releasePayment(ticket.replayKey);
      return this.notVerified(tool, verified.invalidReason, verified.invalidMessage);
    } catch (err) {
      await this.ledger.releasePayment(ticket.replayKey);
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
        'facilitator_unavailable',
        `The payment facilitator ${what}; the tool did not run. Retry the same payment shortly.`,
      );
    }
  }

  private notVerified(
    tool: AnyPaidToolDefinition,
    invalidReason: string | undefined,
    detail: string | undefined,
  ): PaymentRejection {
    // A facilitator's verdict is answered with the challenge: 402, or 412 when a Permit2 allowance must be granted first.
    // The caller gets its reason code and our sentence; the facilitator's own text is logged only (redacted).
    const reason = ownReason(invalidReason, 'invalid_payment');
    if (detail || reason !== invalidReason)
      this.log.info('the facilitator refused a payment', {
        tool: tool.name,
        reason,
        facilitatorReason: invalidReason,
        facilitatorMessage: detail,
      });
    const status = reason === 'permit2_allowance_required' ? 412 : 402;
    return this.reject(tool, reason, notVerifiedMessage(reason), status);
  }

  private async quietly(action: () => Promise<unknown>): Promise<void> {
    try {
      await action();
    } catch (err) {
      this.log.error('store write failed', { error: (err as Error).message });
    }
  }

  private reject(tool: AnyPaidToolDefinition, reason: PaymentCode, message: string): PaymentRejection;
  private reject(tool: AnyPaidToolDefinition, reason: string, message: string, status: RefusalStatus): PaymentRejection;
  private reject(
    tool: AnyPaidToolDefinition,
    reason: string,
    message: string,
    status?: RefusalStatus,
  ): PaymentRejection {
    return status === undefined
      ? this.reader.reject(tool, reason as PaymentCode, message)
      : this.reader.reject(tool, reason, message, status);
  }
}

/** The replay-guard row of a ticket, with what reconciling it after a crash needs. */
function claimOf(tool: AnyPaidToolDefinition, ticket: PaymentTicket, owner: string | undefined): PaymentClaim {
  const { requirements } = ticket;
  const voucher = isVoucherPayment(requirements, ticket.payload);
  return {
    replayKey: ticket.replayKey,
    tool: tool.name,
    network: requirements.network,
    payer: ticket.payer,
    amount: requirements.amount,
    transport: ticket.transport,
    protocol: ticket.protocol ?? 'x402',
    details: { payload: claimedPayload(ticket.payload, requirements), requirements, requestHash: ticket.requestHash },
    // A voucher moves no money: its charge, a later write to the same store, waits for the disk itself.
    syncEarly: !voucher,
    // A voucher's claim names its holder: a restart on this machine decides it at once if this process is killed.
    ...(voucher && owner && { owner }),
  };
}
