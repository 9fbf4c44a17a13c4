/**
 * One call through the remote deployment, as the agent's stdio server and `tollbooth call` make it: validate the
 * input, probe for the challenge (x402, MPP or both), choose an option under the budget, reserve it in the store,
 * ask the user above the threshold, sign with the official client (x402) or mppx's EVM charge client (MPP) and
 * deliver (see deliver.ts). Every outcome is a value.
 */
import { randomUUID } from 'node:crypto';
import type { PaymentRequired } from '@x402/core/types';
import {
  appendPaymentIdentifierToExtensions,
  generatePaymentId,
  PAYMENT_IDENTIFIER,
} from '@x402/extensions/payment-identifier';
import type { z } from 'zod';
import { ToolError } from '../errors.js';
import { inputError } from '../invoke.js';
import type { Logger } from '../log.js';
import type { NetworkEntry } from '../payments/networks.js';
import { requestHash } from '../payments/idempotency.js';
import type { NewSpend, Store } from '../store/store.js';
import type { ToolGroup } from '../tool.js';
import { budgetDay, micros, type Budget } from './budget.js';
import { atomicCap, chooseFromOffers, usd, type Offers, type PricedOption } from './choose.js';
import { deliver, fromStored, paymentNote, type DeliveryContext, type SignedPayment } from './deliver.js';
import { dryRunReport, notPayable, optionLabel } from './explain.js';
import { buildRequest, send, type RemoteAnswer, type RemoteRequest } from './http.js';
import { readMppOffers, signMppCredential } from './mpp.js';
import { tableEntry } from './networks.js';
import type { CallOutcome } from './outcome.js';
import type { ClientSettings } from './settings.js';
import type { Wallets } from './wallets.js';

/** A tool as the caller sees it: where it lives, what it takes and returns, whether it is paid. */
export interface CallTarget {
  name: string;
  group: ToolGroup;
  method: 'GET' | 'POST';
  path: string;
  input: z.ZodType;
  output: z.ZodType;
  paid: boolean;
}

/** The user's answer to "pay this?". */
export type Approval = 'accepted' | 'declined' | 'unavailable';

/** Per-call options of the transport that makes the call. */
export interface CallOptions {
  signal: AbortSignal;
  /** Asks the user to approve a payment above the threshold (MCP elicitation; `--yes` on the command line). */
  approve: (question: string) => Promise<Approval>;
  /** Per-call cap for this call in dollars (`--max-usd`), instead of BUDGET_MAX_USD_PER_CALL. */
  maxUsdPerCall?: number;
  /** Show the challenge and the option that would be paid; pay nothing. */
  dryRun?: boolean;
}

/** What the caller runs on. */
export interface CallerDeps {
  settings: ClientSettings;
  networks: readonly NetworkEntry[];
  store: Store;
  wallets: Wallets;
  budget: Budget;
  log: Logger;
}

/** Calls tools of a remote deployment, paying from the user's wallets under the user's budget. */
export class RemoteCaller {
  /** Paid calls in flight by request: an identical call made meanwhile (a host retrying after its own time limit) waits for the same outcome instead of paying again. */
  private readonly inFlight = new Map<string, Promise<CallOutcome>>();

  constructor(private readonly deps: CallerDeps) {}

  /** Calls one tool with the caller's input. */
  async call(target: CallTarget, input: unknown, options: CallOptions): Promise<CallOutcome> {
    const { settings, budget } = this.deps;
    const base = settings.remote[target.group];
    if (!base) {
      return refused(
        new ToolError(
          'not_found',
          `No remote deployment is configured for ${target.name} (group "${target.group}"): set REMOTE_URL or REMOTE_URL_${target.group.toUpperCase()}.`,
        ),
      );
    }
    const args = input ?? {};
    const parsed = target.input.safeParse(args);
    if (!parsed.success) return refused(inputError(parsed.error));
    const request = buildRequest(base, target, args);
    if (!target.paid) return this.free(target, request, options);
    if (!budget.allowsTool(target.name)) {
      return refused(
        new ToolError(
          'budget_exceeded',
          `Paying for ${target.name} is not allowed by the user's budget (BUDGET_TOOLS=${budget.settings.tools?.join(',')}); nothing was paid.`,
        ),
      );
    }
    const hash = requestHash(`${target.name}\n${request.method} ${request.url}`, parsed.data);
    if (options.dryRun) return this.probeAndPay(target, request, hash, options);
    const running = this.inFlight.get(hash);
    if (running) return running;
    const outcome = this.paidCall(target, request, hash, options);
    this.inFlight.set(hash, outcome);
    try {
      return await outcome;
    } finally {
      this.inFlight.delete(hash);
    }
  }

  private async paidCall(
    target: CallTarget,
    request: RemoteRequest,
    hash: string,
    options: CallOptions,
  ): Promise<CallOutcome> {
    const pending = await this.deps.store.pendingSpend(hash);
    if (pending?.payload) {
      this.deps.log.info('re-sending a payment whose outcome was unknown', {
        tool: target.name,
        protocol: pending.protocol ?? 'x402',
        network: pending.network,
      });
      return deliver(this.context(target, request, pending, true), fromStored(pending.payload));
    }
    return this.probeAndPay(target, request, hash, options);
  }

  private async probeAndPay(
    target: CallTarget,
    request: RemoteRequest,
    hash: string,
    options: CallOptions,
  ): Promise<CallOutcome> {
    // MPP challenges are read only when they may be needed (reading them loads mppx): see `offersToWeigh`.
    const probe = await send(request, this.deps.settings.timeoutMs, options.signal, undefined, false);
    switch (probe.type) {
      case 'no_answer':
        return refused(
          new ToolError(
            'upstream_unavailable',
            `The remote deployment did not answer ${request.method} ${request.url} (${probe.message}); nothing was paid. Try again later.`,
          ),
        );
      case 'ok':
        return checkedOutput(target, probe.body);
      case 'error':
        return { type: 'remote_error', status: probe.status, body: probe.body };
      case 'challenge':
        return this.pay(target, request, hash, await this.offersToWeigh(probe, options), options);
    }
  }

  /**
   * The offers of a probe's challenge. MPP challenges sent over HTTP are read (mppx loads) only when they matter: a
   * dry run, MPP preferred, or no payable x402 option (then they are paid, or listed with why they are not).
   */
  private async offersToWeigh(
    probe: Extract<RemoteAnswer, { type: 'challenge' }>,
    options: CallOptions,
  ): Promise<Offers> {
    const { settings } = this.deps;
    const x402 = probe.challenge ? { x402: probe.challenge } : {};
    if (!probe.mppHeader) return { ...x402, mpp: probe.mpp };
    if (!options.dryRun && settings.protocols[0] === 'x402' && probe.challenge) {
      const x402Only = chooseFromOffers({ ...x402, mpp: [] }, this.deps.wallets, this.rules(options));
      if (x402Only.type === 'chosen') return { ...x402, mpp: [] };
    }
    return { ...x402, mpp: await readMppOffers(probe.mppHeader) };
  }

  private rules(options: CallOptions) {
    const { budget, settings, networks } = this.deps;
    const maxMicrosPerCall =
      options.maxUsdPerCall !== undefined ? micros(options.maxUsdPerCall) : budget.maxMicrosPerCall;
    return {
      networks,
      ...(budget.settings.networks ? { allowed: budget.settings.networks } : {}),
      preference: settings.preference,
      maxMicrosPerCall,
      protocols: settings.protocols,
    };
  }

  private async pay(
    target: CallTarget,
    request: RemoteRequest,
    hash: string,
    offers: Offers,
    options: CallOptions,
  ): Promise<CallOutcome> {
    const { budget, wallets } = this.deps;
    const rules = this.rules(options);
    const { maxMicrosPerCall } = rules;
    const choice = chooseFromOffers(offers, wallets, rules);
    if (options.dryRun)
      return {
        type: 'dry_run',
        report: await dryRunReport(target.name, request.url, offers, choice, budget, maxMicrosPerCall),
      };
    switch (choice.type) {
      case 'none_payable':
        return notPayable(target.name, offers, choice.options, wallets, budget);
      case 'over_cap':
        return refused(
          new ToolError(
            'budget_exceeded',
            `${target.name} costs at least ${usd(choice.cheapest.usdMicros!)}, over the user's per-call limit of ${usd(maxMicrosPerCall)}; nothing was paid. ${budget.describe(maxMicrosPerCall)}.`,
          ),
        );
      case 'chosen':
        return this.reserveAndPay(target, request, hash, offers, choice.chosen, maxMicrosPerCall, options);
    }
  }

  private async reserveAndPay(
    target: CallTarget,
    request: RemoteRequest,
    hash: string,
    offers: Offers,
    chosen: PricedOption,
    capMicros: number,
    options: CallOptions,
  ): Promise<CallOutcome> {
    const { budget, store } = this.deps;
    const challenge = offers.x402;
    const protocol = chosen.protocol ?? 'x402';
    const declaresId =
      protocol === 'x402' && challenge?.x402Version === 2 && challenge.extensions?.[PAYMENT_IDENTIFIER] !== undefined;
    const paymentId = declaresId ? generatePaymentId() : undefined;
    const spend: NewSpend = {
      id: randomUUID(),
      day: budgetDay(),
      tool: target.name,
      resource: request.url,
      requestHash: hash,
      network: chosen.network,
      asset: chosen.option.asset,
      amount: chosen.amount.toString(),
      usdMicros: chosen.usdMicros!,
      protocol,
      ...(paymentId ? { paymentId } : {}),
    };
    const reserved = await budget.reserve(spend);
    if (reserved.type === 'over_budget') {
      const left = Math.max(0, budget.maxMicrosPerDay - reserved.spentMicros);
      return refused(
        new ToolError(
          'budget_exceeded',
          `${target.name} costs ${usd(spend.usdMicros)}, but only ${usd(left)} of today's ${usd(budget.maxMicrosPerDay)} budget is left (${usd(reserved.spentMicros)} spent or being paid, UTC day ${spend.day}); nothing was paid. The budget renews at 00:00 UTC; ${budget.describe()}.`,
        ),
      );
    }
    if (budget.needsApproval(spend.usdMicros)) {
      const question = `Pay ${usd(spend.usdMicros)} (${spend.amount} units of ${spend.asset} on ${spend.network}${protocol === 'mpp' ? ', with MPP' : ''}) for ${target.name} at ${request.url}? Today so far: ${usd(reserved.spentMicros - spend.usdMicros)} of ${usd(budget.maxMicrosPerDay)}.`;
      const answer = await options.approve(question);
      if (answer !== 'accepted') {
        await store.cancelSpend(
          spend.id,
          answer === 'declined' ? 'declined by the user' : 'approval could not be asked',
        );
        const why =
          answer === 'declined'
            ? 'the user declined it'
            : 'it is above the approval threshold and the user could not be asked (the MCP client does not support elicitation; on the command line pass --yes)';
        return refused(
          new ToolError(
            'payment_not_approved',
            `The payment of ${usd(spend.usdMicros)} for ${target.name} was not made: ${why}. ${budget.describe()}.`,
          ),
        );
      }
    }
    let payment: SignedPayment;
    try {
      payment = await this.sign(offers, chosen, paymentId, atomicCap(capMicros, chosen.decimals!));
    } catch (err) {
      await store.cancelSpend(spend.id, 'could not sign the payment');
      const reason = String((err as Error)?.message ?? err)
        .split('\n', 1)[0]!
        .slice(0, 300);
      return refused(
        new ToolError(
          'payment_failed',
          `Could not sign the payment for ${target.name} (${optionLabel(chosen)}: ${reason}); nothing was paid.`,
        ),
        await paymentNote({ budget, spend }, 'cancelled'),
      );
    }
    return deliver(this.context(target, request, spend, false), payment);
  }

  /** Signs the chosen option: the official x402 client, or mppx's EVM charge client with the token's EIP-712 domain from the table. */
  private async sign(
    offers: Offers,
    chosen: PricedOption,
    paymentId: string | undefined,
    capAtomic: bigint,
  ): Promise<SignedPayment> {
    const { wallets, networks } = this.deps;
    if (chosen.mpp) {
      const entry = tableEntry(networks, chosen.network, chosen.option.asset);
      if (!entry?.name || !entry.version) throw new Error("the token's EIP-712 domain is not in the network table");
      return signMppCredential(
        chosen.mpp,
        wallets.evmAccount(),
        { name: entry.name, version: entry.version },
        capAtomic,
      );
    }
    const challenge = offers.x402!;
    const extensions = paymentId
      ? appendPaymentIdentifierToExtensions(structuredClone(challenge.extensions ?? {}), paymentId)
      : challenge.extensions;
    const forPayment = {
      ...challenge,
      accepts: [chosen.option],
      ...(extensions ? { extensions } : {}),
    } as unknown as PaymentRequired;
    const payload = await wallets
      .clientFor(chosen.option, challenge.x402Version, capAtomic)
      .createPaymentPayload(forPayment);
    return { protocol: 'x402', payload };
  }

  private context(target: CallTarget, request: RemoteRequest, spend: NewSpend, resumed: boolean): DeliveryContext {
    const { store, budget, log, settings, networks } = this.deps;
    return {
      store,
      budget,
      log,
      timeoutMs: settings.timeoutMs,
      output: target.output,
      tool: target.name,
      request,
      spend,
      resumed,
      networks,
    };
  }

  private async free(target: CallTarget, request: RemoteRequest, options: CallOptions): Promise<CallOutcome> {
    const answer = await send(request, this.deps.settings.timeoutMs, options.signal);
    switch (answer.type) {
      case 'ok':
        return checkedOutput(target, answer.body);
      case 'no_answer':
        return refused(
          new ToolError(
            'upstream_unavailable',
            `The remote deployment did not answer ${request.method} ${request.url} (${answer.message}). Try again later.`,
          ),
        );
      case 'challenge':
        return {
          type: 'payment_required',
          ...(answer.challenge ? { challenge: answer.challenge } : {}),
          ...(answer.mpp.length > 0 ? { mpp: answer.mpp.map((o) => o.challenge) } : {}),
          hint: `${target.name} is a free helper here, but the remote asked for a payment; Tollbooth pays only for paid tools.`,
        };
      case 'error':
        return { type: 'remote_error', status: answer.status, body: answer.body };
    }
  }
}

function refused(error: ToolError, payment?: Awaited<ReturnType<typeof paymentNote>>): CallOutcome {
  return { type: 'refused', error, ...(payment ? { payment } : {}) };
}

function checkedOutput(target: CallTarget, body: unknown): CallOutcome {
  const checked = target.output.safeParse(body);
  if (checked.success) return { type: 'success', output: checked.data };
  return refused(
    new ToolError(
      'upstream_invalid',
      `The remote's answer to ${target.name} does not match the tool's output schema; nothing was paid. Report it to the remote's operator.`,
    ),
  );
}
