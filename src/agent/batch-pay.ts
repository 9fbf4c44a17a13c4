/**
 * Paying an x402 `batch-settlement` entry with the official client scheme: the first call of a channel deposits into
 * the escrow (a deposit sized by AGENT_BATCH_DEPOSIT_USD, at most what is left of the day's budget, booked as
 * COMMITTED), every call signs a cumulative voucher whose price is drawn from that commitment into SPENT, and a refund
 * gives the rest back (batch-refund.ts). The channel state lives in the agent's store, so it survives restarts. Calls
 * on one channel take turns in this process (their vouchers are cumulative).
 */
import { randomUUID } from 'node:crypto';
import type { PaymentPayload, PaymentRequired, SettleResponse } from '@x402/core/types';
import type { BatchSettlementDepositStrategyContext, ClientChannelStorage } from '@x402/evm/batch-settlement/client';
import type { AgentChannelBook, ChannelConfigNote } from '../shared/agent-channels.js';
import { ToolError } from '../shared/errors.js';
import type { Logger } from '../shared/log.js';
import type { NewSpend, SpendLedger } from '../shared/spends.js';
import {
  channelOf,
  DEFAULT_DEPOSIT_CALLS,
  DepositRefused,
  laneOf,
  type Approve,
  type BatchCallDeps,
  type BatchChoice,
  type Lane,
  type Sent,
  type Signing,
} from './batch-types.js';
import { depositBounds } from './batch-deposit-bounds.js';
import { delivered, paymentNote, type DeliveryContext } from './booking.js';
import { budgetDay, micros, type Budget } from './budget.js';
import { atomicCap, toUsdMicros, usd } from './choose.js';
import { send } from './http.js';
import { refused, type CallOutcome } from './outcome.js';
import type { BatchSettings } from './settings.js';
import type { BatchSigning } from './wallets.js';

export type { BatchCallDeps, BatchChoice, Lane } from './batch-types.js';

/** Pays batch-settlement entries for one agent: its store's channels, its budget, its settings. */
export class BatchPayer {
  private readonly signing = new Map<string, Signing>();
  private readonly turns = new Map<string, Promise<unknown>>();

  constructor(
    readonly book: AgentChannelBook,
    readonly settings: BatchSettings,
    private readonly spends: SpendLedger,
    private readonly budget: Budget,
    private readonly log: Logger,
  ) {}

  /** What the wallets' batch-settlement scheme is built with: the store's channel state and this budget's deposits. */
  signer(): BatchSigning {
    const storage: ClientChannelStorage = {
      get: (key) => this.book.get(key),
      set: (key, context) => this.book.set(key, context),
      delete: (key) => this.book.delete(key),
    };
    return { storage, depositStrategy: (ctx) => this.sizeDeposit(ctx) };
  }

  /** Pays one call of the chosen batch-settlement entry, after the calls before it on the same channel. */
  pay(deps: BatchCallDeps, pay: BatchChoice, options: { approve: Approve }): Promise<CallOutcome> {
    return this.inTurn({ ...pay.chosen.option, network: pay.chosen.network }, () =>
      this.payOnce(deps, pay, options, true),
    );
  }

  /** Runs `work` after whatever runs on the same channel (network, pay-to, asset) in this process: calls, refunds. */
  inTurn<T>(lane: Lane, work: () => Promise<T>): Promise<T> {
    const key = laneOf(lane);
    const before = this.turns.get(key) ?? Promise.resolve();
    const mine = before.catch(() => undefined).then(work);
    this.turns.set(key, mine);
    return mine;
  }

  /**
   * The deposit for a new (or drained) channel: AGENT_BATCH_DEPOSIT_USD or 20 calls' price, at least what the next
   * voucher needs, at most what the budget and origin caps allow (batch-deposit-bounds.ts); claimed before signing.
   */
  private async sizeDeposit(ctx: BatchSettlementDepositStrategyContext): Promise<string> {
    const signing = this.signing.get(laneOf(ctx.paymentRequirements));
    if (!signing) throw new Error('a batch-settlement deposit outside a paid call');
    const { spend, decimals } = signing;
    const minimum = BigInt(ctx.minimumDepositAmount);
    const wanted =
      this.settings.depositUsd !== undefined
        ? atomicCap(micros(this.settings.depositUsd), decimals)
        : DEFAULT_DEPOSIT_CALLS * BigInt(ctx.requestAmount);
    const bounds = await depositBounds(this.budget, this.spends, signing.origins, spend, decimals);
    const amount = [wanted > minimum ? wanted : minimum, bounds.most].reduce((a, b) => (a < b ? a : b));
    const usdMicros = toUsdMicros(amount, decimals);
    const id = randomUUID();
    const claimed =
      amount >= minimum &&
      (await this.book.claimDeposit(
        { ...spend, id, channelId: ctx.channelId.toLowerCase(), amount: amount.toString(), usdMicros },
        this.budget.maxMicrosPerDay,
        bounds.originDayMicros,
      ));
    if (!claimed) {
      const needed = `a channel deposit of at least ${usd(toUsdMicros(minimum, decimals))} is needed`;
      throw new DepositRefused(
        `${needed}, but ${bounds.limit}`,
        bounds.rule && { rule: bounds.rule, origin: spend.origin },
      );
    }
    signing.deposit = { id, amount, usdMicros };
    return amount.toString();
  }

  /** Signs (depositing when the channel needs it), books the voucher and sends it; one retry after a corrective 402. */
  private async payOnce(
    deps: BatchCallDeps,
    pay: BatchChoice,
    options: { approve: Approve },
    retry: boolean,
  ): Promise<CallOutcome> {
    const { chosen, target } = pay;
    const spend: NewSpend = {
      id: randomUUID(),
      day: budgetDay(),
      tool: target.name,
      resource: pay.request.url,
      requestHash: pay.hash,
      network: chosen.network,
      asset: chosen.option.asset,
      amount: chosen.amount.toString(),
      usdMicros: chosen.usdMicros!,
      protocol: 'x402',
      origin: new URL(pay.request.url).origin,
      payTo: chosen.option.payTo,
    };
    const notApproved = await this.approval(pay, spend, options);
    if (notApproved) return notApproved;
    const lane = laneOf(chosen.option);
    const signing: Signing = { spend, decimals: chosen.decimals!, origins: deps.settings.origins };
    this.signing.set(lane, signing);
    let payload: PaymentPayload;
    try {
      payload = await this.sign(deps, pay);
    } catch (err) {
      return this.notSigned(signing, spend, target.name, err);
    } finally {
      this.signing.delete(lane);
    }
    const channelId = channelOf(payload);
    await this.book.note({
      channelId,
      network: chosen.network,
      asset: chosen.option.asset,
      payTo: chosen.option.payTo,
      resource: pay.request.url,
      decimals: chosen.decimals!,
      channelConfig: (payload.payload as { channelConfig: ChannelConfigNote }).channelConfig,
    });
    const draw = await this.book.drawVoucher({ ...spend, channelId });
    return this.deliver(deps, pay, options, { spend, payload, draw, deposit: signing.deposit, retry });
  }

  private async sign(deps: BatchCallDeps, pay: BatchChoice): Promise<PaymentPayload> {
    const challenge = pay.offers.x402!;
    const forPayment = { ...challenge, accepts: [pay.chosen.option] } as unknown as PaymentRequired;
    const cap = atomicCap(pay.capMicros, pay.chosen.decimals!);
    return deps.wallets.clientFor(pay.chosen.option, 2, cap).createPaymentPayload(forPayment);
  }

  /** Nothing was signed: the deposit claimed for it (if any) goes back, and the call is refused. */
  private async notSigned(signing: Signing, spend: NewSpend, tool: string, err: unknown): Promise<CallOutcome> {
    if (signing.deposit) await this.book.endDeposit(signing.deposit.id, { settled: false, note: 'not signed' });
    const reason = String((err as Error)?.message ?? err)
      .split('\n', 1)[0]!
      .slice(0, 300);
    const code = err instanceof DepositRefused ? 'budget_exceeded' : 'payment_failed';
    const error = new ToolError(
      code,
      `${tool} was not paid with batch-settlement (${reason}); nothing was paid. ${this.budget.describe()}.`,
      { details: err instanceof DepositRefused ? err.details : undefined },
    );
    return refused(error, await paymentNote({ budget: this.budget, spend }, 'cancelled'));
  }

  /** Asks the user when the call's price is above the approval threshold. */
  private async approval(
    pay: BatchChoice,
    spend: NewSpend,
    options: { approve: Approve },
  ): Promise<CallOutcome | undefined> {
    if (!this.budget.needsApproval(spend.usdMicros)) return undefined;
    const answer = await options.approve(
      `Pay ${usd(spend.usdMicros)} (${spend.amount} units of ${spend.asset} on ${spend.network}, from a batch-settlement channel) for ${pay.target.name} at ${pay.request.url}?`,
    );
    if (answer === 'accepted') return undefined;
    return refused(
      new ToolError(
        'payment_not_approved',
        `The payment of ${usd(spend.usdMicros)} for ${pay.target.name} was not made: the user did not approve it. ${this.budget.describe()}.`,
      ),
    );
  }

  /** Sends the signed payment once and books what the answer says (see the module comment). */
  private async deliver(
    deps: BatchCallDeps,
    pay: BatchChoice,
    options: { approve: Approve },
    sent: Sent,
  ): Promise<CallOutcome> {
    const { payload, draw, deposit, spend } = sent;
    const answer = await send(deps.mcp, pay.request, deps.settings.timeoutMs, new AbortController().signal, {
      protocol: 'x402',
      payload,
    });
    const client = deps.wallets.clientFor(pay.chosen.option, 2, atomicCap(pay.capMicros, pay.chosen.decimals!));
    const requirements = pay.chosen.option;
    if (answer.type === 'ok') {
      const receipt = answer.receipt;
      if (receipt?.success)
        await client.handlePaymentResponse({ paymentPayload: payload, requirements, settleResponse: receipt });
      return this.paid(deps, pay, sent, answer.body, receipt);
    }
    if (answer.type === 'challenge') {
      // Refused before any charge: the voucher (and a deposit it carried) was not taken.
      await this.book.endVoucher(draw, {
        type: 'released',
        note: `refused: ${answer.challenge?.error ?? answer.status}`,
      });
      if (deposit) await this.book.endDeposit(deposit.id, { settled: false, note: 'refused by the seller' });
      const recovered = answer.challenge
        ? await client
            .handlePaymentResponse({
              paymentPayload: payload,
              requirements,
              paymentRequired: answer.challenge as never,
            })
            .catch(() => undefined)
        : undefined;
      if (recovered && sent.retry) return this.payOnce(deps, pay, options, false);
      const why = answer.challenge?.error ?? `status ${answer.status}`;
      const error = new ToolError(
        'payment_failed',
        `The seller refused the batch-settlement payment (${why}); nothing was charged.`,
      );
      return refused(error, await paymentNote({ budget: this.budget, spend }, 'cancelled'));
    }
    if (answer.type === 'error') {
      // A failed call commits no voucher (the scheme charges only after the handler succeeded): nothing was spent. A
      // deposit it carried stays committed (it may be in escrow) until the channel is refunded.
      await this.book.endVoucher(draw, { type: 'released', note: `the seller answered ${answer.status}` });
      const receipt = answer.receipt ? { receipt: answer.receipt } : {};
      return { type: 'remote_error', status: answer.status, body: answer.body, ...receipt };
    }
    return this.unknown(pay, sent, answer.message);
  }

  /** Delivered: the deposit is committed, the voucher spent at what the seller charged (`extra.chargedAmount`). */
  private async paid(deps: BatchCallDeps, pay: BatchChoice, sent: Sent, body: unknown, receipt?: SettleResponse) {
    const { draw, deposit, spend } = sent;
    const charged = String(receipt?.extra?.chargedAmount ?? spend.amount);
    const chargedMicros = /^\d+$/.test(charged) ? toUsdMicros(BigInt(charged), pay.chosen.decimals!) : spend.usdMicros;
    if (deposit) {
      await this.book.endDeposit(deposit.id, {
        settled: true,
        ...(receipt?.transaction ? { transaction: receipt.transaction } : {}),
      });
    }
    await this.book.endVoucher(draw, {
      type: 'settled',
      chargedMicros,
      amount: charged,
      ...(receipt?.payer ? { payer: receipt.payer } : {}),
    });
    const booked = { ...spend, amount: charged, usdMicros: chargedMicros };
    const ctx: DeliveryContext = {
      spends: this.spends,
      budget: this.budget,
      log: this.log,
      timeoutMs: deps.settings.timeoutMs,
      output: pay.target.output,
      tool: pay.target.name,
      request: pay.request,
      spend: booked,
      resumed: false,
      networks: deps.networks,
    };
    return delivered(ctx, { protocol: 'x402', payload: sent.payload }, body, receipt, undefined);
  }

  /** No clear answer: the voucher (and its deposit) stay counted as pending; the channel resyncs on its next call. */
  private async unknown(pay: BatchChoice, sent: Sent, why: string): Promise<CallOutcome> {
    const note = `outcome unknown: ${why}`;
    await this.book.endVoucher(sent.draw, { type: 'pending', note });
    this.log.warn('a batch-settlement call has no clear answer; its voucher stays counted', { tool: pay.target.name });
    const error = new ToolError(
      'payment_pending',
      `The batch-settlement payment for ${pay.target.name} was sent, but ${why}; it stays counted against today's budget. The next call on this channel resynchronizes with the seller.`,
    );
    return refused(error, await paymentNote({ budget: this.budget, spend: sent.spend }, 'pending'));
  }
}
