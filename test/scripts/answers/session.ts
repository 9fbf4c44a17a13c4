/** What every scenario shares: the client, the answers so far, the payers, and x402 payment helpers. */
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { LOCAL_NETWORK } from '../../support/paid.js';
import { encodePayment, signExactPayment } from '../../support/payer.js';
import { headerOf, type AskedRequest, type RawAnswer, RawClient } from './http.js';
import { recordAnswer, type RecordedAnswer } from './record.js';

/** A payer for the configuration without a chain: a fixed key, so its address is the same on every run. */
const OFFLINE_PAYER = privateKeyToAccount(`0x${'5a'.repeat(32)}`);

/** Payers by role, so no payer runs out of its 10 test USDC and each transport's calls stay apart. */
export interface Payers {
  http: PrivateKeyAccount;
  mpp: PrivateKeyAccount;
  mcp: PrivateKeyAccount;
  mcpMpp: PrivateKeyAccount;
}

/** The recording session of one configuration. */
export class Session {
  readonly answers: RecordedAnswer[] = [];
  readonly client: RawClient;
  readonly payers: Payers;

  constructor(
    readonly config: string,
    readonly baseUrl: string,
    accounts: readonly PrivateKeyAccount[],
  ) {
    this.client = new RawClient(baseUrl);
    const [http, mpp, mcp, mcpMpp] = accounts;
    this.payers = {
      http: http ?? OFFLINE_PAYER,
      mpp: mpp ?? OFFLINE_PAYER,
      mcp: mcp ?? OFFLINE_PAYER,
      mcpMpp: mcpMpp ?? OFFLINE_PAYER,
    };
  }

  /** Sends a request and records its answer under `<config>/<id>`. */
  async ask(id: string, asked: AskedRequest): Promise<RawAnswer> {
    const raw = await this.client.send(asked);
    const fullId = `${this.config}/${id}`;
    if (this.answers.some((a) => a.id === fullId)) throw new Error(`answer id ${fullId} recorded twice`);
    this.answers.push(recordAnswer(fullId, asked, raw));
    return raw;
  }

  /** Closes the client's connections. */
  close(): void {
    this.client.close();
  }
}

/** The payment requirements of a 402 answer's PAYMENT-REQUIRED header (v2) or JSON body (v1), if any. */
export function challengeOf(answer: RawAnswer): PaymentRequired | undefined {
  const header = headerOf(answer, 'payment-required');
  if (header) return JSON.parse(Buffer.from(header, 'base64').toString('utf8')) as PaymentRequired;
  try {
    const body = JSON.parse(answer.body.toString('utf8')) as PaymentRequired;
    return body.x402Version === 1 && Array.isArray(body.accepts) ? body : undefined;
  } catch {
    return undefined;
  }
}

/** The chain id of an EVM network, by CAIP-2 id or by its x402 v1 name. */
const V1_CHAINS: Record<string, number> = { base: 8453, 'base-sepolia': 84532 };
function chainIdOf(network: string): number | undefined {
  if (network.startsWith('eip155:')) return Number(network.slice('eip155:'.length));
  return V1_CHAINS[network];
}

/** An entry a recorder can sign, with the x402 version of the challenge it came from. */
export interface PayableEntry {
  version: number;
  entry: PaymentRequirements;
}

/** The entry a recorder pays: the local chain's exact entry, else the first EVM exact entry. */
export function payableEntry(challenge: PaymentRequired | undefined): PayableEntry | undefined {
  const exact = challenge?.accepts.filter((a) => a.scheme === 'exact' && chainIdOf(a.network) !== undefined) ?? [];
  const entry = exact.find((a) => chainIdOf(a.network) === chainIdOf(LOCAL_NETWORK)) ?? exact[0];
  return entry && challenge ? { version: challenge.x402Version, entry } : undefined;
}

/**
 * A real EIP-3009 payment for an entry: the payload (v2 `accepted`, or the v1 `scheme`/`network` form), and the
 * header it travels in over HTTP (PAYMENT-SIGNATURE for v2, X-PAYMENT for v1) with its base64 value.
 */
export async function signFor(
  payer: PrivateKeyAccount,
  { version, entry }: PayableEntry,
  overrides: { amount?: string } = {},
): Promise<{ payload: unknown; header: [string, string] }> {
  const v1 = entry as unknown as { maxAmountRequired?: string };
  const amount = overrides.amount ?? entry.amount ?? v1.maxAmountRequired;
  const signed: PaymentPayload = await signExactPayment(payer, { ...entry, amount } as PaymentRequirements, {
    chainId: chainIdOf(entry.network),
  });
  if (version !== 1) {
    const accepted = overrides.amount ? { ...entry, amount: overrides.amount } : entry;
    const payload = { ...signed, accepted };
    return { payload, header: ['payment-signature', encodePayment(payload)] };
  }
  const payload = { x402Version: 1, scheme: entry.scheme, network: entry.network, payload: signed.payload };
  return { payload, header: ['x-payment', encodePayment(payload)] };
}
