import { x402ResourceServer } from '@x402/core/server';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import type { Config } from '../../config/config.js';
import { ERROR_CODES, type PaymentCode, type RefusalStatus } from '../../shared/errors.js';
import { x402VersionOf } from '../../tool/price.js';
import type { AnyPaidToolDefinition } from '../../tool/tool.js';
import { decodePayment, type RawPayment } from './decode.js';
import { echoChecker, type EchoCheck } from './extensions.js';
import type { Facilitator } from '../facilitators/facilitator.js';
import { canonicalNetworkId, createMatcher, type Matched } from './match.js';
import type { DecodedCredential } from '../mpp/credential.js';
import type { MppGate } from '../mpp/gate.js';
import type { PaymentRejection, PaymentTicket } from '../ledger/outcomes.js';
import { railFor } from '../rails/index.js';
import type { Identified, Rail, RailServer } from '../rails/rail.js';
import { buildChallenge, type Challenge, type ChallengeBook } from '../challenges/requirements.js';
import { BATCH_SCHEME, identifyChannelPayment } from '../batch/kinds.js';
import type { BatchSeller } from '../batch/seller.js';

/** What reading a payment gives: the ticket to claim, verify and settle (transport and request hash added by the broker), or why not. */
type ReadOutcome = { type: 'read'; ticket: Omit<PaymentTicket, 'transport' | 'requestHash'> } | PaymentRejection;

/** The start of a refusal for the wrong protocol version: which version the endpoint speaks. */
const speaks = (version: 1 | 2) => `This endpoint speaks x402 version ${version}`;

const NO_MATCH =
  'The payment does not match any option this endpoint advertised (scheme, network, asset, amount, payTo, maxTimeoutSeconds and extra must be echoed exactly). Pick one entry of `accepts` and sign for it unchanged.';

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
    /** What start-up learned from the facilitators' `/supported` (options withheld, fee payers adopted). */
    private readonly book: ChallengeBook,
    /** The batch-settlement schemes (BATCH_SETTLEMENT=on), registered on the resource server for their hooks. */
    batch?: BatchSeller,
  ) {
    this.server = new x402ResourceServer(facilitator.client);
    this.registry = new Set(tools.map((tool) => tool.name));
    batch?.registerOn(this.server);
  }

  /** The tool's challenge, with `error` set to the given reason. */
  challenge(tool: AnyPaidToolDefinition, error?: string): Challenge {
    const base = this.challengeOf(tool);
    return error === undefined ? base : { ...base, error };
  }

  /** A rejection carrying the tool's challenge with the reason as its error; a code of the table has its status there. */
  reject(tool: AnyPaidToolDefinition, code: PaymentCode, message: string): PaymentRejection;
  /** A rejection under a reason outside the table (a facilitator's verdict, an MPP or extension reason), with its status. */
  reject(tool: AnyPaidToolDefinition, reason: string, message: string, status: RefusalStatus): PaymentRejection;
  reject(tool: AnyPaidToolDefinition, reason: string, message: string, status?: RefusalStatus): PaymentRejection {
    const refused = status ?? ERROR_CODES[reason as PaymentCode].http;
    return { type: 'rejected', status: refused, reason, message, challenge: this.challenge(tool, reason) };
  }

  /**
   * Reads a payment into a ticket, or the rejection saying why not: an MPP credential becomes the x402 payment it
   * stands for; the proof is decoded within bounds and must be of the tool's x402 version.
   */
  async read(tool: AnyPaidToolDefinition, received: RawPayment): Promise<ReadOutcome> {
    if (received.source === 'mpp') return this.readMpp(tool, received.credential);
    const expected = x402VersionOf(tool);
    // A proof that came where the other version's proofs go (only HTTP has one place per version).
    const came = received.source === 'x-payment' ? 1 : received.source === 'payment-signature' ? 2 : expected;
    if (came !== expected)
      return this.reject(
        tool,
        'invalid_x402_version',
        `${speaks(expected)}, and the payment was sent as version ${came}.`,
      );
    const decoded = decodePayment(received);
    if (!decoded.ok) return this.reject(tool, 'invalid_payment', decoded.message);
    const { payload } = decoded;
    if (payload.x402Version !== expected) {
      const says = `the payment says version ${payload.x402Version}. Sign for version ${expected}.`;
      return this.reject(tool, 'invalid_x402_version', `${speaks(expected)}; ${says}`);
    }
    return this.ticketFor(tool, payload, { protocol: 'x402' });
  }

  /**
   * An MPP credential, checked once by the gate (challenge, offer, authorization terms), becomes the x402 payment of
   * the route's own entry and version: it is built by us, so it is not decoded or version-checked again.
   */
  private async readMpp(tool: AnyPaidToolDefinition, credential: DecodedCredential): Promise<ReadOutcome> {
    const mpp = this.mpp.read(tool, credential);
    if (mpp.type === 'rejected') return this.reject(tool, mpp.reason, mpp.message, mpp.status);
    return this.ticketFor(tool, mpp.payment, { protocol: 'mpp', idempotencyId: mpp.idempotencyId });
  }

  /** Matches a decoded payload to an advertised option, checks its extensions, and finds its rail and replay key. */
  private async ticketFor(
    tool: AnyPaidToolDefinition,
    payload: PaymentPayload,
    from: { protocol: 'mpp' | 'x402'; idempotencyId?: string },
  ): Promise<ReadOutcome> {
    const { match, echo } = this.paymentsOf(tool);
    const matched = match(payload);
    if (!matched) return this.reject(tool, 'no_matching_payment_requirements', NO_MATCH);
    // Echoed extensions are checked against our own declarations; what is forwarded is ours (never the client's schemas).
    const echoed = echo(payload.x402Version === 2 ? (payload.extensions ?? undefined) : undefined);
    if (!echoed.ok) return this.reject(tool, echoed.reason, echoed.message, echoed.status);
    const forwarded = echoed.extensions ? { ...matched.payload, extensions: echoed.extensions } : matched.payload;
    // Verification and settlement use our requirement in canonical form (a short-named v2 entry → its CAIP-2 network).
    const { requirements } = matched;
    // A channel payment is the seller's batch schemes' (registered with the server), not a rail's.
    const identified =
      requirements.scheme === BATCH_SCHEME
        ? identifyChannelPayment(forwarded, requirements)
        : await this.identified(tool, forwarded, requirements, matched.networkId);
    if ('type' in identified) return identified;
    if (!identified.ok) return this.reject(tool, identified.reason ?? 'invalid_payment', identified.message);
    const paymentId = echoed.paymentId ?? from.idempotencyId;
    const ticket = { tool: tool.name, payload: forwarded, requirements, replayKey: identified.replayKey };
    const id = paymentId ? { idempotencyId: paymentId } : {};
    return { type: 'read', ticket: { ...ticket, payer: identified.payer, protocol: from.protocol, ...id } };
  }

  /** A rail's reading of a matched payment: its rail found and loaded, its replay key and payer, its window checked. */
  private async identified(
    tool: AnyPaidToolDefinition,
    forwarded: PaymentPayload,
    requirements: PaymentRequirements,
    networkId: string,
  ): Promise<Identified | PaymentRejection> {
    const net = this.config.networks.find((n) => n.id === networkId);
    const rail = net ? railFor(requirements, net, this.rails) : undefined;
    if (!rail || !this.facilitator.supports(requirements.network, requirements.scheme))
      return this.reject(tool, 'unsupported_payment_rail', this.unsupportedMessage(requirements));
    const part = await this.prepareRail(requirements);
    const identified = part!.identify(forwarded, requirements);
    if (!identified.ok) return identified;
    const tooLong = await part!.checkWindow?.(forwarded, requirements, net!, this.config);
    return tooLong ? this.reject(tool, tooLong.reason, tooLong.message) : identified;
  }

  private unsupportedMessage(req: PaymentRequirements): string {
    const accepted = this.config.networks.flatMap((n) =>
      n.schemes.filter((s) => this.facilitator.supports(n.id, s)).map((s) => `${s} on ${n.id}`),
    );
    if (accepted.length === 0) {
      return 'This server has no payment facilitator configured yet (operator: set FACILITATOR_URL or a FACILITATOR_<FAMILY> settlement key).';
    }
    return `Payments with scheme "${req.scheme}" on ${req.network} are advertised but cannot be settled by this server right now. Pay with one of: ${accepted.join(', ')}.`;
  }

  /**
   * The server part of a requirement's rail (never its facilitator side), its server scheme registered on the
   * resource server for the requirement's network (once per rail and network): it loads with the first payment that
   * needs it, or earlier when the server preloads its rails.
   */
  async prepareRail(requirements: PaymentRequirements): Promise<RailServer | undefined> {
    const net = this.config.networks.find((n) => n.id === canonicalNetworkId(requirements.network));
    const rail = net ? railFor(requirements, net, this.rails) : undefined;
    if (!net || !rail) return undefined;
    const part = await rail.server();
    for (const id of rail.networkIds?.(net) ?? [net.id]) {
      const key = `${rail.id}|${id}`;
      if (this.registered.has(key)) continue;
      this.server.register(id as `${string}:${string}`, part.serverScheme(net));
      this.registered.add(key);
    }
    return part;
  }

  /** A tool's challenge, matcher and echo check, built on the tool's first call and kept. */
  private paymentsOf(tool: AnyPaidToolDefinition): ToolPayments {
    // A `base-v1` tool and its v2 face (its name under another policy) have a challenge each.
    const key = `${tool.name}|${tool.pricing.accepts}`;
    let found = this.perTool.get(key);
    if (!found) {
      if (!this.registry.has(tool.name)) throw new Error(`tool ${tool.name} is not registered with the payment broker`);
      const challenge = buildChallenge(this.config, tool, undefined, this.book);
      found = {
        challenge,
        match: createMatcher(challenge.accepts as PaymentRequirements[]),
        echo: echoChecker(challenge),
      };
      this.perTool.set(key, found);
    }
    return found;
  }

  /** A tool's challenge as built once (without an error reason). */
  challengeOf(tool: AnyPaidToolDefinition): Challenge {
    return this.paymentsOf(tool).challenge;
  }
}
