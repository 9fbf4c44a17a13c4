/**
 * The seller's side of x402 `batch-settlement`: one official `BatchSettlementEvmScheme` per offered EVM network, on
 * the store's channels (src/store/channels.ts), driven by the one paid pipeline. Verification runs through the
 * resource server's hooks (the scheme is registered there: cumulative check, local signature check of a plain voucher
 * on a fresh mirror, else the facilitator's `/verify`; then the reservation); this class adds what the pipeline needs
 * around them: the entries of the challenges, the commit of a voucher after the handler succeeded (no facilitator
 * call), the facilitator's `/settle` for a deposit, the release of a failed call and the corrective 402.
 */
import type { x402ResourceServer } from '@x402/core/server';
import type { PaymentPayload, PaymentRequirements, SettleResponse, SupportedResponse } from '@x402/core/types';
import type { AuthorizerSigner } from '@x402/evm';
import { BatchSettlementEvmScheme } from '@x402/evm/batch-settlement/server';
import { privateKeyToAccount } from 'viem/accounts';
import type { Config } from '../../config/config.js';
import type { Logger } from '../../shared/log.js';
import type { NetworkEntry } from '../../shared/networks.js';
import type { BatchChannels } from '../../store/channels.js';
import type { AnyPaidToolDefinition } from '../../tool/tool.js';
import { MAX_TIMEOUT_SECONDS, type Challenge } from '../challenges/requirements.js';
import { BATCH_SCHEME, CUMULATIVE_MISMATCH, channelPayment, type BatchOffer } from './kinds.js';
import { checkVouchersNatively } from './local-voucher.js';
import { ReservationLeases } from './lease.js';
import type { ProcessOwner } from './owner.js';

/** The `kinds` of a facilitator's `/supported` answer. */
type Kinds = SupportedResponse['kinds'];

/** The settle context the scheme's hooks read (the payload object is the key of the scheme's per-request state). */
const hookContext = (payload: PaymentPayload, requirements: PaymentRequirements) => ({
  paymentPayload: payload,
  requirements,
  declaredExtensions: {},
  phase: 'after-handler' as const,
  settledPhases: [],
});

/** The sellers's batch-settlement schemes and the challenge entries they built (see the module comment). */
export class BatchSeller implements BatchOffer {
  private readonly schemes = new Map<string, BatchSettlementEvmScheme>();
  private readonly entries = new Map<string, PaymentRequirements>();
  /** The lease of the channel reservations the schemes write, renewed while this instance runs their calls. */
  private readonly leases: ReservationLeases;

  constructor(
    private readonly config: Config,
    /** The store's channels the schemes run on (the reconciler reads them too). */
    readonly channels: BatchChannels,
    private readonly log: Logger,
    /** This process as the holder of its calls' claims and reservations, and the judge of others' (owner.ts). */
    readonly owner: ProcessOwner,
  ) {
    this.leases = new ReservationLeases(channels, config.batch.reservationLease * 1000, log, owner);
  }

  /** The networks offered, in the table's order. */
  get networks(): string[] {
    return [...this.schemes.keys()];
  }

  /** The official scheme of each offered network (the claim loop, claim-loop.ts, builds its channel managers on them). */
  get schemesByNetwork(): ReadonlyMap<string, BatchSettlementEvmScheme> {
    return this.schemes;
  }

  /** The entry of a network for a price, as the official scheme's `enhancePaymentRequirements` built it. */
  entry(network: string, amount: string): PaymentRequirements | undefined {
    return this.entries.get(`${network}|${amount}`);
  }

  /**
   * Builds a scheme for each EVM network whose facilitator lists `batch-settlement` (v2) with a receiver-authorizer
   * (the operator's key, else the one the facilitator lists), and each entry the tools' prices need there.
   */
  async prepare(kinds: Kinds, tools: readonly AnyPaidToolDefinition[]): Promise<void> {
    const signer = this.operatorSigner();
    for (const net of this.config.networks.filter((n) => n.family === 'evm')) {
      const kind = kinds.find((k) => k.x402Version === 2 && k.scheme === BATCH_SCHEME && k.network === net.id);
      if (!kind) continue;
      if (!signer && typeof kind.extra?.receiverAuthorizer !== 'string') {
        this.log.warn(
          'batch-settlement not offered: no receiver-authorizer (BATCH_RECEIVER_AUTHORIZER_KEY unset and the facilitator lists none)',
          { network: net.id },
        );
        continue;
      }
      const scheme = new BatchSettlementEvmScheme(this.config.payTo.evm as `0x${string}`, {
        storage: this.leases.storage(),
        withdrawDelay: this.config.batch.withdrawDelay,
        ...(signer ? { receiverAuthorizerSigner: signer } : {}),
      });
      checkVouchersNatively(scheme);
      for (const amount of pricesOn(net, tools)) {
        const entry = await scheme.enhancePaymentRequirements(baseEntry(this.config, net, amount), kind, []);
        this.entries.set(`${net.id}|${amount}`, entry);
      }
      this.schemes.set(net.id, scheme);
    }
  }

  private operatorSigner(): AuthorizerSigner | undefined {
    const key = this.config.batch.receiverAuthorizerKey;
    return key ? (privateKeyToAccount(key) as unknown as AuthorizerSigner) : undefined;
  }

  /** Registers each network's scheme on the resource server, so its verification runs the scheme's hooks. */
  registerOn(server: x402ResourceServer): void {
    for (const [network, scheme] of this.schemes) server.register(network as `${string}:${string}`, scheme);
  }

  private scheme(network: string): BatchSettlementEvmScheme {
    const scheme = this.schemes.get(network);
    if (!scheme) throw new Error(`batch-settlement is not offered on ${network}`);
    return scheme;
  }

  /**
   * After the handler succeeded: a voucher's charge is committed to the channel (its reservation must still be this
   * call's and the new total within the signed cap) and answered with the voucher-only receipt, no facilitator call;
   * a deposit goes through the facilitator's `/settle` (the deposit transaction), then the channel is mirrored.
   */
  async settle(
    payload: PaymentPayload,
    requirements: PaymentRequirements,
    server: x402ResourceServer,
  ): Promise<SettleResponse> {
    if (channelPayment(payload)?.type !== 'voucher') return server.settlePayment(payload, requirements);
    const hooks = this.scheme(requirements.network).schemeHooks;
    const out = await hooks.onBeforeSettle!(hookContext(payload, requirements) as never);
    if (out && 'skip' in out && out.skip) return out.result;
    const reason = out && 'abort' in out ? out.reason : 'settlement_failed';
    return { success: false, errorReason: reason, transaction: '', network: requirements.network };
  }

  /**
   * A verified call holds its channel (the reservation the scheme wrote at verification) while it runs here: its
   * lease is renewed until {@link letGo} (lease.ts), so only a dead instance's reservation lapses.
   */
  hold(payload: PaymentPayload, requirements: PaymentRequirements): void {
    const pendingId = this.schemes.get(requirements.network)?.readRequestContext(payload)?.pendingId;
    const channelId = channelPayment(payload)?.channelId;
    if (pendingId && channelId) this.leases.hold(payload, channelId, pendingId);
  }

  /** The call of `payload` ended (committed, settled or released): its reservation is no longer renewed. */
  letGo(payload: PaymentPayload): void {
    this.leases.end(payload);
  }

  /** A verified call that did not complete: its reservation is released; the channel's charged amount is unchanged. */
  async cancel(payload: PaymentPayload, requirements: PaymentRequirements): Promise<void> {
    const hooks = this.scheme(requirements.network).schemeHooks;
    await hooks.onVerifiedPaymentCanceled!({
      ...hookContext(payload, requirements),
      reason: 'handler_failed',
    } as never);
  }

  /**
   * The corrective 402 of a cumulative-amount mismatch: the challenge whose batch entry carries our channel state
   * (`extra.channelState`) and the latest voucher we hold (`extra.voucherState`), for the client to resynchronise.
   */
  async corrective(challenge: Challenge, payload: PaymentPayload): Promise<Challenge> {
    if (challenge.x402Version !== 2) return challenge;
    const accepts = challenge.accepts.map((r) => ({ ...r, extra: structuredClone(r.extra) }));
    const scheme = this.scheme(payload.accepted.network);
    const enriched = await scheme.enrichPaymentRequiredResponse({
      requirements: accepts,
      paymentPayload: payload,
      resourceInfo: challenge.resource,
      error: CUMULATIVE_MISMATCH,
      paymentRequiredResponse: { ...challenge, accepts },
    });
    return { ...challenge, accepts: enriched ?? accepts };
  }
}

/** The prices (token base units) the tools are sold at on a network: each one's column there, and its default. */
function pricesOn(net: NetworkEntry, tools: readonly AnyPaidToolDefinition[]): Set<string> {
  const prices = new Set<string>();
  for (const tool of tools) {
    prices.add(tool.price[net.priceColumn] ?? tool.price.default);
    prices.add(tool.price.default);
  }
  return prices;
}

/** The entry before the scheme adds its fields, as an EVM `exact` entry of the same network and price reads. */
function baseEntry(config: Config, net: NetworkEntry, amount: string): PaymentRequirements {
  return {
    scheme: BATCH_SCHEME,
    network: net.id as PaymentRequirements['network'],
    asset: net.asset,
    amount,
    payTo: config.payTo.evm,
    maxTimeoutSeconds: MAX_TIMEOUT_SECONDS,
    extra: { name: net.name, version: net.version },
  };
}
