import { x402ResourceServer } from '@x402/core/server';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import type { Config } from '../config.js';
import type { AnyPaidToolDefinition } from '../tool.js';
import { decodePayment, type RawPayment } from './decode.js';
import { echoChecker, type EchoCheck } from './extensions.js';
import type { Facilitator } from './facilitator.js';
import { canonicalNetworkId, createMatcher, type Matched } from './match.js';
import type { DecodedCredential } from './mpp/credential.js';
import type { MppGate } from './mpp/gate.js';
import { REASONS, type PaymentRejection, type PaymentTicket } from './outcomes.js';
import { railFor } from './rails/index.js';
import type { Rail, RailSdk } from './rails/rail.js';
import { buildChallenge, type Challenge } from './requirements.js';

/** What the broker keeps per tool, built once: the challenge, and the matcher and echo check derived from it. */
interface ToolPayments {
  challenge: Challenge;
  match: (payload: PaymentPayload) => Matched | undefined;
  echo: (echoed: Record<string, unknown> | undefined) => EchoCheck;
}

/**
 * The reading half of the broker: each tool's challenge, matcher and echo check (built once), and a payment read into
 * a ticket — decoded within bounds, version checked, matched to an advertised option, extensions checked against our
 * declarations, its rail found and its replay key computed — or the rejection saying why. Nothing here touches the
 * store or moves money; the broker runs the ledger steps (claim, verify, settle, record) on what this reads.
 */
export class PaymentReader {
  /** The official resource server: the rails' server schemes, registered per network as payments arrive. */
  readonly server: x402ResourceServer;
  /** Each tool's challenge, matcher and echo check, built once (on the tool's first call). */
  private readonly perTool = new Map<string, ToolPayments>();
  /** Names of the tools the broker sells. */
  private readonly registry: ReadonlySet<string>;
  /** `rail|network id` pairs whose server scheme is registered on the resource server. */
  private readonly registered = new Set<string>();

  constructor(
    private readonly config: Config,
    private readonly facilitator: Facilitator,
    tools: readonly AnyPaidToolDefinition[],
    private readonly rails: readonly Rail[],
    private readonly mpp: MppGate,
  ) {
    this.server = new x402ResourceServer(facilitator.client);
    this.registry = new Set(tools.map((tool) => tool.name));
  }

  /** The tool's challenge, with `error` set to the given reason. */
  challenge(tool: AnyPaidToolDefinition, error?: string): Challenge {
    const base = this.challengeOf(tool);
    return error === undefined ? base : { ...base, error };
  }

  /** A rejection carrying the tool's challenge with the reason as its error. */
  reject(
    tool: AnyPaidToolDefinition,
    status: PaymentRejection['status'],
    reason: string,
    message: string,
  ): PaymentRejection {
    return { type: 'rejected', status, reason, message, challenge: this.challenge(tool, reason) };
  }

  /** Decodes the proof, checks its version, matches it against the challenge and finds the rail and replay key. */
  async read(
    tool: AnyPaidToolDefinition,
    received: RawPayment,
  ): Promise<{ type: 'read'; ticket: Omit<PaymentTicket, 'transport' | 'requestHash'> } | PaymentRejection> {
    // An MPP credential is matched to its challenge and becomes the x402 payment it stands for: the same path from here.
    const mpp = received.source === 'mpp' ? this.mpp.read(tool, received.value as DecodedCredential) : undefined;
    if (mpp?.type === 'rejected') return this.reject(tool, mpp.status, mpp.reason, mpp.message);
    const raw: RawPayment = mpp
      ? { source: mpp.x402Version === 1 ? 'x-payment' : 'payment-signature', value: mpp.payment }
      : received;
    const v1 = tool.group === 'transfers';
    if (raw.source === 'x-payment' && !v1) {
      return this.reject(
        tool,
        400,
        REASONS.wrongVersion,
        'This endpoint speaks x402 version 2: send the payment in the PAYMENT-SIGNATURE header (X-PAYMENT is for version 1).',
      );
    }
    if (raw.source === 'payment-signature' && v1) {
      return this.reject(
        tool,
        400,
        REASONS.wrongVersion,
        'This endpoint speaks x402 version 1: send the payment in the X-PAYMENT header with x402Version 1.',
      );
    }
    const decoded = decodePayment(raw);
    if (!decoded.ok) return this.reject(tool, 400, REASONS.malformed, decoded.message);
    const payload = decoded.payload;
    const expected = v1 ? 1 : 2;
    if (payload.x402Version !== expected) {
      const header = v1 ? 'X-PAYMENT' : 'PAYMENT-SIGNATURE';
      return this.reject(
        tool,
        400,
        REASONS.wrongVersion,
        `This endpoint speaks x402 version ${expected}; the payment says version ${payload.x402Version}. Sign for version ${expected} and send it in ${header}.`,
      );
    }
    const { match, echo } = this.paymentsOf(tool);
    const matched = match(payload);
    if (!matched) {
      return this.reject(
        tool,
        402,
        REASONS.noMatch,
        'The payment does not match any option this endpoint advertised (scheme, network, asset, amount, payTo, maxTimeoutSeconds and extra must be echoed exactly). Pick one entry of `accepts` and sign for it unchanged.',
      );
    }
    // Echoed extensions are checked against our own declarations; what is forwarded is ours (never the client's schemas).
    const echoed = echo(payload.x402Version === 2 ? (payload.extensions ?? undefined) : undefined);
    if (!echoed.ok) return this.reject(tool, echoed.status, echoed.reason, echoed.message);
    const forwarded = echoed.extensions ? { ...matched.payload, extensions: echoed.extensions } : matched.payload;
    // Verification and settlement use our requirement in canonical form (a short-named v2 entry → its CAIP-2 network).
    const { requirements } = matched;
    const net = this.config.networks.find((n) => n.id === matched.networkId);
    const rail = net ? railFor(requirements, net, this.rails) : undefined;
    if (!rail || !this.facilitator.supports(requirements.network, requirements.scheme)) {
      return this.reject(tool, 402, REASONS.unsupportedRail, this.unsupportedMessage(requirements));
    }
    const sdk = await this.prepareRail(requirements);
    const identified = sdk!.identify(forwarded, requirements);
    if (!identified.ok) return this.reject(tool, 400, REASONS.malformed, identified.message);
    const paymentId = echoed.paymentId ?? mpp?.idempotencyId;
    const id = paymentId ? { idempotencyId: paymentId } : {};
    const protocol = mpp ? 'mpp' : 'x402';
    return {
      type: 'read',
      ticket: {
        tool: tool.name,
        payload: forwarded,
        requirements,
        replayKey: identified.key,
        payer: identified.payer,
        protocol,
        ...id,
      },
    };
  }

  private unsupportedMessage(req: PaymentRequirements): string {
    const accepted = this.config.networks.flatMap((n) =>
      n.schemes.filter((s) => this.facilitator.supports(n.id, s)).map((s) => `${s} on ${n.id}`),
    );
    if (accepted.length === 0) {
      return 'This server has no payment facilitator configured yet (operator: set FACILITATOR_URL or a FACILITATOR_<FAMILY> settlement key); nothing was charged.';
    }
    return `Payments with scheme "${req.scheme}" on ${req.network} are advertised but cannot be settled by this server right now; nothing was charged. Pay with one of: ${accepted.join(', ')}.`;
  }

  /**
   * The rail of a requirement with its SDK loaded, its server scheme registered on the resource server for the
   * requirement's network (once per rail and network): rails load with the first payment that needs them.
   */
  async prepareRail(requirements: PaymentRequirements): Promise<RailSdk | undefined> {
    const net = this.config.networks.find((n) => n.id === canonicalNetworkId(requirements.network));
    const rail = net ? railFor(requirements, net, this.rails) : undefined;
    if (!net || !rail) return undefined;
    const sdk = await rail.sdk();
    for (const id of rail.networkIds?.(net) ?? [net.id]) {
      const key = `${rail.id}|${id}`;
      if (this.registered.has(key)) continue;
      this.server.register(id as `${string}:${string}`, sdk.serverScheme(net));
      this.registered.add(key);
    }
    return sdk;
  }

  /** A tool's challenge, matcher and echo check, built on the tool's first call and kept. */
  private paymentsOf(tool: AnyPaidToolDefinition): ToolPayments {
    let found = this.perTool.get(tool.name);
    if (!found) {
      if (!this.registry.has(tool.name)) throw new Error(`tool ${tool.name} is not registered with the payment broker`);
      const challenge = buildChallenge(this.config, tool);
      found = {
        challenge,
        match: createMatcher(challenge.accepts as PaymentRequirements[]),
        echo: echoChecker(challenge),
      };
      this.perTool.set(tool.name, found);
    }
    return found;
  }

  /** A tool's challenge as built once (without an error reason). */
  challengeOf(tool: AnyPaidToolDefinition): Challenge {
    return this.paymentsOf(tool).challenge;
  }
}
