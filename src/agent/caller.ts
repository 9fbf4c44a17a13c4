/**
 * One call through the remote deployment, as the agent's stdio server and `tollbooth call` make it: validate the
 * input, probe for the challenge (x402, MPP or both) and choose an option under the budget; paying it (claim in the
 * spending ledger, approval, signing) is pay.ts, seeing it through deliver.ts. Every outcome is a value.
 */
import { z } from 'zod';
import { ToolError } from '../shared/errors.js';
import { inputError } from '../shared/input-error.js';
import { requestHash } from '../shared/json.js';
import { fromStored } from './remote.js';
import { micros } from './budget.js';
import type { CallerDeps, CallOptions, CallTarget } from './call.js';
import { chooseFromOffers, usd, type Offers } from './choose.js';
import { deliver } from './deliver.js';
import { dryRunReport, notPayable } from './explain.js';
import { buildRequest, send, type RemoteAnswer, type RemoteRequest } from './http.js';
import { readMppOffers } from './mpp.js';
import { refused, type CallOutcome } from './outcome.js';
import { driftRefusal, originCallCapMicros, originRefusal } from './origins-guard.js';
import { deliveryContext, payChosen } from './pay.js';

/** What `tollbooth fetch` pays for: any answer of any URL (the seller's own, unchecked), booked as the tool `fetch`. */
export const FETCH_TARGET: CallTarget = {
  name: 'fetch',
  group: 'tools',
  method: 'GET',
  path: '/',
  input: z.unknown(),
  output: z.unknown(),
  paid: true,
};

/** Calls tools of a remote deployment, paying from the user's wallets under the user's budget. */
export class RemoteCaller {
  /** Paid calls in flight by request: an identical call made meanwhile (a host retrying after its own time limit) waits for the same outcome instead of paying again. */
  private readonly inFlight = new Map<string, Promise<CallOutcome>>();

  constructor(private readonly deps: CallerDeps) {}

  /** Calls one tool with the caller's input. */
  async call(target: CallTarget, input: unknown, options: CallOptions): Promise<CallOutcome> {
    const { settings, budget } = this.deps;
    const base = settings.remote[target.group];
    if (!base && !target.request) {
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
    let request: RemoteRequest;
    try {
      request = target.request ? target.request(parsed.data ?? {}) : buildRequest(base!, target, args);
    } catch (err) {
      // An input the request cannot carry (a header value over one line): refused before anything is sent.
      if (err instanceof ToolError) return refused(err);
      throw err;
    }
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
    return this.paidOnce(target, request, hash, options);
  }

  /**
   * `tollbooth fetch`: one request to any URL, paid when the seller answers with an x402 (v1 or v2) or MPP challenge,
   * under the same budget, approvals and ledger; the spend is keyed by method, URL and body.
   */
  async fetchUrl(request: RemoteRequest, options: CallOptions): Promise<CallOutcome> {
    if (!this.deps.budget.allowsTool(FETCH_TARGET.name)) {
      return refused(
        new ToolError(
          'budget_exceeded',
          `Paying any URL is not allowed by the user's budget (BUDGET_TOOLS=${this.deps.budget.settings.tools?.join(',')}; add "fetch" to allow it); nothing was paid.`,
        ),
      );
    }
    const hash = requestHash(`${FETCH_TARGET.name}\n${request.method} ${request.url}`, request.body ?? null);
    return this.paidOnce(FETCH_TARGET, request, hash, options);
  }

  /** A paid call, once: an identical call in flight is waited for; a dry run only probes. */
  private async paidOnce(
    target: CallTarget,
    request: RemoteRequest,
    hash: string,
    options: CallOptions,
  ): Promise<CallOutcome> {
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
    const pending = await this.deps.spends.pendingSpend(hash);
    if (pending?.payload) {
      this.deps.log.info('re-sending a payment whose outcome was unknown', {
        tool: target.name,
        protocol: pending.protocol ?? 'x402',
        network: pending.network,
      });
      return deliver(deliveryContext(this.deps, target, request, pending, true), fromStored(pending.payload));
    }
    return this.probeAndPay(target, request, hash, options);
  }

  private async probeAndPay(
    target: CallTarget,
    request: RemoteRequest,
    hash: string,
    options: CallOptions,
  ): Promise<CallOutcome> {
    const notAllowed = originRefusal(this.deps, target, request.url);
    if (notAllowed) return notAllowed;
    // MPP challenges are read only when they may be needed (reading them loads mppx): see `offersToWeigh`.
    const probe = await send(this.deps.mcp, request, this.deps.settings.timeoutMs, options.signal, undefined, false);
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
        return this.pay(target, request, hash, await this.offersToWeigh(probe, request.url, options), options);
    }
  }

  /**
   * The offers of a probe's challenge. MPP challenges sent over HTTP are read (mppx loads) only when they matter: a
   * dry run, MPP preferred, or no payable x402 option (then they are paid, or listed with why they are not).
   */
  private async offersToWeigh(
    probe: Extract<RemoteAnswer, { type: 'challenge' }>,
    url: string,
    options: CallOptions,
  ): Promise<Offers> {
    const { settings } = this.deps;
    const x402 = probe.challenge ? { x402: probe.challenge } : {};
    if (!probe.mppHeader) return { ...x402, mpp: probe.mpp };
    if (!options.dryRun && settings.protocols[0] === 'x402' && probe.challenge) {
      const x402Only = chooseFromOffers({ ...x402, mpp: [] }, this.deps.wallets, this.rules(options, url));
      if (x402Only.type === 'chosen') return { ...x402, mpp: [] };
    }
    return { ...x402, mpp: await readMppOffers(probe.mppHeader) };
  }

  /** The chooser's rules for a request: the per-call cap is the lower of the call's (or global) and its origin's own. */
  private rules(options: CallOptions, url: string) {
    const { budget, settings, networks } = this.deps;
    const callCap = options.maxUsdPerCall !== undefined ? micros(options.maxUsdPerCall) : budget.maxMicrosPerCall;
    const originCap = originCallCapMicros(this.deps, url);
    const maxMicrosPerCall = originCap === undefined ? callCap : Math.min(callCap, originCap);
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
    const rules = this.rules(options, request.url);
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
            `${target.name} costs at least ${usd(choice.cheapest.usdMicros!)}, over the user's per-call limit of ${usd(maxMicrosPerCall)}; nothing was paid. ${budget.describe(maxMicrosPerCall)}${originCallCapMicros(this.deps, request.url) === maxMicrosPerCall ? ' (the per-call cap of this origin in AGENT_ORIGIN_LIMITS)' : ''}.`,
            originCallCapMicros(this.deps, request.url) === maxMicrosPerCall
              ? { details: { rule: 'origin_per_call', origin: new URL(request.url).origin } }
              : {},
          ),
        );
      case 'chosen': {
        const drift = await driftRefusal(this.deps, target, request.url, choice.chosen, options);
        if (drift) return drift;
        return payChosen(
          this.deps,
          { target, request, hash, offers, chosen: choice.chosen, capMicros: maxMicrosPerCall },
          options,
        );
      }
    }
  }

  private async free(target: CallTarget, request: RemoteRequest, options: CallOptions): Promise<CallOutcome> {
    const answer = await send(this.deps.mcp, request, this.deps.settings.timeoutMs, options.signal);
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
