import { FacilitatorTimeoutError, x402ResourceServer } from '@x402/core/server';
import { VerifyError, type PaymentRequired, type PaymentRequirements, type SettleResponse } from '@x402/core/types';
import { ExactEvmScheme as ExactEvmServerScheme } from '@x402/evm/exact/server';
import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import type { Store, Transport } from '../store/store.js';
import type { AnyToolDefinition } from '../tool.js';
import { decodePayment, type RawPayment } from './decode.js';
import { eip3009Authorization, evmExactReplayKey } from './evm.js';
import type { Facilitator } from './facilitator.js';
import { REASONS, type BeginOutcome, type PaymentRejection, type PaymentTicket, type SettleOutcome } from './outcomes.js';
import { buildChallenge, type Challenge } from './requirements.js';

/** Verifies payments before a handler runs and settles them after it succeeded; outcomes are values. */
export class PaymentBroker {
  private readonly server: x402ResourceServer;
  /** Each tool's challenge, built once; its `accepts` is what payments are matched against. */
  private readonly challenges = new Map<string, Challenge>();

  constructor(
    private readonly config: Config,
    private readonly store: Store,
    private readonly facilitator: Facilitator,
    private readonly log: Logger,
    tools: readonly AnyToolDefinition[],
  ) {
    this.server = new x402ResourceServer(facilitator.client);
    for (const net of config.networks) {
      if (net.family === 'evm') this.server.register(net.id as `${string}:${string}`, new ExactEvmServerScheme());
    }
    for (const tool of tools) {
      this.challenges.set(tool.name, buildChallenge(config, tool));
    }
  }

  /** The tool's challenge, with `error` set to the given reason. */
  challenge(tool: AnyToolDefinition, error?: string): Challenge {
    const base = this.challengeOf(tool);
    return error === undefined ? base : { ...base, error };
  }

  /** Reads, matches, claims and verifies a payment; the handler may run only on `verified`. */
  async begin(tool: AnyToolDefinition, raw: RawPayment, transport: Transport): Promise<BeginOutcome> {
    const v1 = tool.group === 'transfers';
    if (raw.source === 'x-payment' && !v1) {
      return this.reject(tool, 400, REASONS.wrongVersion, 'This endpoint speaks x402 version 2: send the payment in the PAYMENT-SIGNATURE header (X-PAYMENT is for version 1).');
    }
    if (raw.source === 'payment-signature' && v1) {
      return this.reject(tool, 400, REASONS.wrongVersion, 'This endpoint speaks x402 version 1: send the payment in the X-PAYMENT header with x402Version 1.');
    }
    const decoded = decodePayment(raw);
    if (!decoded.ok) return this.reject(tool, 400, REASONS.malformed, decoded.message);
    const payload = decoded.payload;
    const expected = v1 ? 1 : 2;
    if (payload.x402Version !== expected) {
      const header = v1 ? 'X-PAYMENT' : 'PAYMENT-SIGNATURE';
      return this.reject(tool, 400, REASONS.wrongVersion, `This endpoint speaks x402 version ${expected}; the payment says version ${payload.x402Version}. Sign for version ${expected} and send it in ${header}.`);
    }
    const challenge = this.challengeOf(tool);
    const requirements = this.server.findMatchingRequirements(challenge.accepts as PaymentRequirements[], payload);
    if (!requirements) {
      return this.reject(tool, 402, REASONS.noMatch, 'The payment does not match any option this endpoint advertised (scheme, network, asset, amount, payTo, maxTimeoutSeconds and extra must be echoed exactly). Pick one entry of `accepts` and sign for it unchanged.');
    }
    const ext = this.server.validateExtensions(challenge as PaymentRequired, payload);
    if (!ext.valid) {
      return this.reject(tool, 402, ext.invalidReason ?? 'extension_echo_mismatch', `The echoed extension "${ext.extensionKey ?? ''}" differs from what this endpoint declared; echo it unchanged.`);
    }
    const auth = eip3009Authorization(payload);
    const rail = requirements.network.startsWith('eip155:') && requirements.scheme === 'exact' && !(requirements.extra as Record<string, unknown>).assetTransferMethod;
    if (!rail || !this.facilitator.evmNetworks.has(requirements.network)) {
      return this.reject(tool, 402, REASONS.unsupportedRail, this.unsupportedMessage(requirements));
    }
    if (!auth) return this.reject(tool, 400, REASONS.malformed, 'The exact EVM payment lacks an EIP-3009 authorization with `from` and a 32-byte `nonce`.');
    const ticket: PaymentTicket = { tool: tool.name, payload, requirements, replayKey: evmExactReplayKey(requirements, auth), payer: auth.from, transport };
    return this.claimAndVerify(tool, ticket);
  }

  /** Settles a verified payment after the handler succeeded; records the receipt either way. */
  async settle(tool: AnyToolDefinition, ticket: PaymentTicket): Promise<SettleOutcome> {
    let result: SettleResponse;
    try {
      result = await this.server.settlePayment(ticket.payload, ticket.requirements);
    } catch (err) {
      // The outcome is unknown (timeout, dropped connection): keep the claim so the payment cannot buy a second call.
      this.log.error('settlement outcome unknown', { tool: tool.name, network: ticket.requirements.network, payer: ticket.payer, error: (err as Error).message });
      result = { success: false, errorReason: REASONS.settlementUnknown, errorMessage: (err as Error).message, transaction: '', network: ticket.requirements.network, payer: ticket.payer };
      await this.store.markPaymentUnknown(ticket.replayKey, '');
      await this.record(ticket, result);
      return { type: 'failed', receipt: result, challenge: this.challenge(tool, REASONS.settlementUnknown) };
    }
    if (result.success) {
      await this.complete(ticket, result);
      return { type: 'settled', receipt: result };
    }
    if (result.errorReason === 'settlement_pending') await this.store.markPaymentUnknown(ticket.replayKey, result.transaction);
    else await this.store.releasePayment(ticket.replayKey);
    await this.record(ticket, result);
    return { type: 'failed', receipt: result, challenge: this.challenge(tool, result.errorReason ?? 'settlement_failed') };
  }

  /** Releases a claim whose call did not succeed, so nothing is settled and the authorization stays usable. */
  async release(ticket: PaymentTicket): Promise<void> {
    await this.store.releasePayment(ticket.replayKey);
  }

  private async claimAndVerify(tool: AnyToolDefinition, ticket: PaymentTicket): Promise<BeginOutcome> {
    const { requirements } = ticket;
    const claim = await this.store.claimPayment({ key: ticket.replayKey, tool: tool.name, network: requirements.network, payer: ticket.payer, amount: requirements.amount, transport: ticket.transport });
    switch (claim.type) {
      case 'claimed':
        break;
      case 'in_flight':
        return this.reject(tool, 409, REASONS.inFlight, 'This payment is already paying for a call that is still running; wait for that call, and sign a new authorization for any further call.');
      case 'unknown':
        return this.reject(tool, 402, REASONS.settlementUnknown, `This payment was used for a call whose settlement could not be confirmed${claim.transaction ? ` (transaction ${claim.transaction})` : ''}; it cannot pay for another call. Sign a new authorization, and check your balance before retrying.`);
      case 'spent':
        return this.reject(tool, 402, REASONS.alreadyUsed, `This payment was already used for a call (transaction ${claim.transaction}); sign a new authorization to pay for another call.`);
    }
    try {
      const verified = await this.server.verifyPayment(ticket.payload, requirements);
      if (verified.isValid) return { type: 'verified', ticket: { ...ticket, payer: verified.payer ?? ticket.payer } };
      await this.store.releasePayment(ticket.replayKey);
      return this.notVerified(tool, verified.invalidReason, verified.invalidMessage);
    } catch (err) {
      await this.store.releasePayment(ticket.replayKey);
      if (err instanceof VerifyError) return this.notVerified(tool, err.invalidReason, err.invalidMessage);
      // Anything else is the facilitator failing (timeout, unreachable, 5xx, unreadable answer), not the payment.
      const timedOut = err instanceof FacilitatorTimeoutError;
      this.log.warn('facilitator unavailable during verify', { tool: tool.name, error: String((err as Error)?.message ?? err) });
      const what = timedOut ? 'did not answer in time' : 'failed or answered something unreadable';
      return this.reject(tool, 502, REASONS.facilitatorUnavailable, `The payment facilitator ${what}; nothing was charged and the tool did not run. Retry the same payment shortly.`);
    }
  }

  private notVerified(tool: AnyToolDefinition, invalidReason: string | undefined, detail: string | undefined): PaymentRejection {
    const reason = invalidReason ?? REASONS.malformed;
    const status = reason === 'permit2_allowance_required' ? 412 : 402;
    return this.reject(tool, status, reason, `The payment did not verify (${reason})${detail ? `: ${detail}` : ''}. Sign a new authorization for one of the accepted options.`);
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

  private async record(ticket: PaymentTicket, result: SettleResponse): Promise<void> {
    try {
      await this.store.recordReceipt(this.receiptOf(ticket, result));
    } catch (err) {
      this.log.error('could not store a failed receipt', { tool: ticket.tool, error: (err as Error).message });
    }
  }

  private receiptOf(ticket: PaymentTicket, result: SettleResponse) {
    return {
      key: ticket.replayKey,
      tool: ticket.tool,
      network: ticket.requirements.network,
      payer: result.payer ?? ticket.payer,
      amount: result.amount ?? ticket.requirements.amount,
      transaction: result.transaction,
      status: result.success ? ('settled' as const) : ('failed' as const),
      ...(result.errorReason ? { errorReason: result.errorReason } : {}),
      transport: ticket.transport,
      createdAt: new Date().toISOString(),
    };
  }

  private unsupportedMessage(req: PaymentRequirements): string {
    if (this.facilitator.mode === 'none') {
      return 'This server has no payment facilitator configured yet (operator: set FACILITATOR_URL or FACILITATOR_EVM_PRIVATE_KEY); nothing was charged.';
    }
    return `Payments with scheme "${req.scheme}" on ${req.network} are advertised but not accepted by this server yet; pay with the "exact" scheme on one of: ${[...this.facilitator.evmNetworks].join(', ')}.`;
  }

  private reject(tool: AnyToolDefinition, status: PaymentRejection['status'], reason: string, message: string): PaymentRejection {
    return { type: 'rejected', status, reason, message, challenge: this.challenge(tool, reason) };
  }

  private challengeOf(tool: AnyToolDefinition): Challenge {
    const found = this.challenges.get(tool.name);
    if (!found) throw new Error(`tool ${tool.name} is not registered with the payment broker`);
    return found;
  }
}
