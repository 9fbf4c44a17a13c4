/**
 * The agent's side of the Machine Payments Protocol (MPP, the `Payment` HTTP authentication scheme): reads the
 * `WWW-Authenticate: Payment` challenges of a 402, checks the `evm`/`charge` ones at this boundary, shows each as an
 * option the chooser can value like an x402 `exact` entry, and signs the credential (an EIP-3009 authorization whose
 * nonce is the challenge's hash) with mppx's own EVM charge client. mppx loads on the first MPP challenge only.
 */
import type { PaymentRequirements } from '@x402/core/types';
import type { Account } from 'viem';
import { z } from 'zod';

/** One `Payment` challenge as received (kept whole: the credential echoes it). */
export interface MppChallenge {
  id: string;
  realm: string;
  method: string;
  intent: string;
  request: Record<string, unknown>;
  expires?: string;
  header?: string;
  [key: string]: unknown;
}

/** The parts of an `evm`/`charge` request this client pays, checked. */
export interface EvmCharge {
  chainId: number;
  currency: `0x${string}`;
  recipient: `0x${string}`;
  /** Atomic units of the currency. */
  amount: string;
}

/** A challenge with its `evm`/`charge` reading, or why this client cannot pay it. */
export interface MppOffer {
  challenge: MppChallenge;
  charge?: EvmCharge;
  /** Set when the challenge is not an `evm`/`charge` with an EIP-3009 authorization this client can sign. */
  unsupported?: string;
}

/** The receipt of a settled MPP payment (`Payment-Receipt`), as sent. */
export interface MppReceipt {
  method: string;
  reference: string;
  status: string;
  timestamp?: string;
  [key: string]: unknown;
}

const address = z.string().regex(/^0x[0-9a-fA-F]{40}$/);
const EvmChargeRequestSchema = z.object({
  amount: z.string().regex(/^\d+$/),
  currency: address,
  recipient: address,
  methodDetails: z.object({
    chainId: z.number().int().positive(),
    credentialTypes: z.array(z.string()).optional(),
    splits: z.array(z.unknown()).optional(),
  }),
});
const ReceiptSchema = z
  .object({ method: z.string(), reference: z.string(), status: z.string(), timestamp: z.string().optional() })
  .passthrough();

type Mppx = typeof import('mppx');
let mppx: Promise<Mppx> | undefined;
const loadMppx = (): Promise<Mppx> => (mppx ??= import('mppx'));

/** Whether a `WWW-Authenticate` value carries a `Payment` challenge (cheap: no parsing, mppx not loaded). */
export function offersMpp(wwwAuthenticate: string | null): boolean {
  return wwwAuthenticate !== null && /(^|[\s,])Payment\s/i.test(wwwAuthenticate);
}

/** Reads one challenge into an offer: `evm`/`charge` requests are checked; anything else is kept as unsupported. */
export function offerOf(challenge: MppChallenge): MppOffer {
  if (challenge.method !== 'evm' || challenge.intent !== 'charge')
    return { challenge, unsupported: `${challenge.method}/${challenge.intent}` };
  const parsed = EvmChargeRequestSchema.safeParse(challenge.request);
  if (!parsed.success) return { challenge, unsupported: 'evm/charge with a malformed request' };
  const { amount, currency, recipient, methodDetails } = parsed.data;
  if (methodDetails.credentialTypes && !methodDetails.credentialTypes.includes('authorization'))
    return { challenge, unsupported: 'evm/charge without authorization credentials' };
  if (methodDetails.splits?.length) return { challenge, unsupported: 'evm/charge with payment splits' };
  return {
    challenge,
    charge: {
      chainId: methodDetails.chainId,
      currency: currency as `0x${string}`,
      recipient: recipient as `0x${string}`,
      amount,
    },
  };
}

/** The `Payment` challenges of a 402's `WWW-Authenticate` header, as offers; none when absent or unreadable. */
export async function readMppOffers(wwwAuthenticate: string | null): Promise<MppOffer[]> {
  if (!offersMpp(wwwAuthenticate)) return [];
  const { Challenge } = await loadMppx();
  try {
    return (Challenge.deserializeList(wwwAuthenticate!) as unknown as MppChallenge[]).map(offerOf);
  } catch {
    return [];
  }
}

/** The offer as an x402-shaped `exact` entry, so the chooser values and filters it like the others (network, asset, amount). */
export function asRequirements(offer: MppOffer): PaymentRequirements {
  const c = offer.charge;
  return {
    scheme: 'exact',
    network: c ? `eip155:${c.chainId}` : `mpp:${offer.challenge.method}`,
    asset: c?.currency ?? String(offer.challenge.request.currency ?? ''),
    payTo: c?.recipient ?? String(offer.challenge.request.recipient ?? ''),
    amount: c?.amount ?? String(offer.challenge.request.amount ?? ''),
    maxTimeoutSeconds: 0,
    extra: {},
  } as PaymentRequirements;
}

/** A signed MPP credential: the header to send it in, its value, and the authorization it carries (for the chain check). */
export interface MppCredential {
  protocol: 'mpp';
  header: string;
  value: string;
  /** The same credential as an object: how the MCP binding carries it in `_meta`. */
  credential: unknown;
  from: `0x${string}`;
  nonce: `0x${string}`;
}

/**
 * Signs the credential answering `offer` with mppx's EVM charge client: `authorization` is the token's EIP-712 domain
 * from the agent's network table, and the client itself refuses another chain or an amount above `capAtomic`.
 */
export async function signMppCredential(
  offer: MppOffer,
  account: Account,
  authorization: { name: string; version: string },
  capAtomic: bigint,
): Promise<MppCredential> {
  if (!offer.charge) throw new Error(`this client cannot pay ${offer.unsupported ?? 'that challenge'}`);
  const [{ Challenge, Credential }, { charge }] = await Promise.all([loadMppx(), import('mppx/evm/client')]);
  const expires = offer.challenge.expires ? Date.parse(offer.challenge.expires) : undefined;
  if (expires !== undefined && !(expires > Date.now()))
    throw new Error(`the challenge expired at ${offer.challenge.expires}`);
  const method = charge({
    account,
    authorization,
    networks: [offer.charge.chainId],
    maxAtomicAmount: capAtomic.toString(),
  });
  const value = await method.createCredential({ challenge: offer.challenge as never, context: {} });
  const credential = Credential.deserialize<{ from: `0x${string}`; nonce: `0x${string}` }>(value);
  const { from, nonce } = credential.payload;
  return {
    protocol: 'mpp',
    header: Challenge.credentialHeader(offer.challenge as never),
    value,
    credential,
    from,
    nonce,
  };
}

/** Reads a `Payment-Receipt` header; undefined when absent or not a receipt. */
export function readMppReceipt(header: string | null): MppReceipt | undefined {
  if (!header) return undefined;
  try {
    const parsed = ReceiptSchema.safeParse(JSON.parse(Buffer.from(header, 'base64url').toString('utf8')));
    return parsed.success ? (parsed.data as MppReceipt) : undefined;
  } catch {
    return undefined;
  }
}

/** The code of a Problem Details body (`type` ending in `/problems/<code>`), e.g. `verification-failed`. */
export function problemCode(body: unknown): string | undefined {
  const type = (body as { type?: unknown } | null)?.type;
  return typeof type === 'string' && type.includes('/problems/') ? type.slice(type.lastIndexOf('/') + 1) : undefined;
}
