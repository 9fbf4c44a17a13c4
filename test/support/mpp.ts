import { Challenge, Credential, Receipt } from 'mppx';
import { Mppx, evm } from 'mppx/client';
import type { PrivateKeyAccount } from 'viem';

/** The chain id of the local chain (Base Sepolia's). */
export const LOCAL_CHAIN_ID = 84532;

type Candidate = { challenge: Challenge.Challenge };

/** Keeps the challenges of the local chain only (the server also offers the configured mainnets). */
export function localChallengesFirst<T extends Candidate>(candidates: readonly T[]): T[] {
  return candidates.filter(
    (c) => (c.challenge.request as { methodDetails?: { chainId?: number } }).methodDetails?.chainId === LOCAL_CHAIN_ID,
  );
}

/** The official mppx client paying with the `evm` charge method (EIP-3009 authorizations) from `account` on the local chain. */
export function mppClient(account: PrivateKeyAccount) {
  return Mppx.create({
    methods: [evm.charge({ account, authorization: { name: 'USDC', version: '2' } })],
    polyfill: false,
    orderChallenges: localChallengesFirst,
  });
}

/** Probes `url` without payment and has the mppx client sign a credential (an `Authorization: Payment` value) for it. */
export async function signCredential(account: PrivateKeyAccount, url: string, init: RequestInit): Promise<string> {
  const client = mppClient(account);
  const probe = await fetch(url, init);
  if (probe.status !== 402) throw new Error(`expected a 402 from ${url}, got ${probe.status}`);
  const prepared = await client.preparePayment(probe);
  return prepared.createCredential();
}

/** A credential with its wire JSON edited (the challenge or the payload): what a tampering client would send. */
export function tampered(
  credential: string,
  edit: (wire: { challenge: Record<string, unknown>; payload: Record<string, unknown>; source?: string }) => void,
): string {
  const token = credential.replace(/^Payment\s+/i, '');
  const wire = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as {
    challenge: Record<string, unknown>;
    payload: Record<string, unknown>;
  };
  edit(wire);
  return `Payment ${Buffer.from(JSON.stringify(wire), 'utf8').toString('base64url')}`;
}

/** The request object of a wire credential's challenge (base64url JCS on HTTP). */
export function wireRequest(wire: { challenge: Record<string, unknown> }): Record<string, unknown> {
  return JSON.parse(Buffer.from(String(wire.challenge.request), 'base64url').toString('utf8')) as Record<
    string,
    unknown
  >;
}

/** Encodes a request object back into the wire form of a challenge. */
export function encodeRequest(request: unknown): string {
  return Buffer.from(JSON.stringify(request), 'utf8').toString('base64url');
}

/** Decodes a `Payment-Receipt` header with mppx. */
export function decodeReceipt(res: Response): Receipt.Receipt {
  return Receipt.fromResponse(res);
}

/** The decoded credential (challenge and EIP-3009 payload) of an `Authorization: Payment` value. */
export function decodeCredentialValue(credential: string) {
  return Credential.deserialize<{
    type: 'authorization';
    from: string;
    to: string;
    value: string;
    validAfter: string;
    validBefore: string;
    nonce: string;
    signature: string;
  }>(credential);
}
