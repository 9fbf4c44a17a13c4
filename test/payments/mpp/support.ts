import { evm } from 'mppx';
import type { Challenge } from 'mppx';
import { privateKeyToAccount } from 'viem/accounts';
import type { Hex } from 'viem';
import { loadConfig } from '../../../src/config/config.js';
import { offersFor, type MppOffer } from '../../../src/payments/mpp/challenge.js';
import { buildChallenge } from '../../../src/payments/challenges/requirements.js';
import type { AnyPaidToolDefinition } from '../../../src/tool/tool.js';

/** A well-known development key (the local chain's first account); it signs in tests only. */
export const payer = privateKeyToAccount('0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80');
export const SECRET = 'unit-test-secret-key-of-at-least-32-bytes';

/** A configuration with MPP on, a shared key and a realm, plus the MPP offers of a tool under it. */
export function setup(tool: AnyPaidToolDefinition, env: Record<string, string> = {}) {
  const config = loadConfig({ LOG_LEVEL: 'silent', MPP_SECRET_KEY: SECRET, MPP_REALM: 'tollbooth.test', ...env });
  const challenge = buildChallenge(config, tool);
  return { config, challenge, offers: offersFor(challenge, config.networks) };
}

/** Signs the EIP-3009 authorization an `evm/charge` challenge asks for, as the mppx client would (nonce = challenge hash). */
export async function signFor(
  challenge: Challenge.Challenge,
  offer: MppOffer,
  over: Partial<Record<'to' | 'value' | 'nonce' | 'validBefore', string>> = {},
) {
  const request = offer.request;
  const message = {
    from: payer.address,
    to: (over.to ?? request.recipient) as Hex,
    value: BigInt(over.value ?? request.amount),
    validAfter: 0n,
    validBefore: BigInt(over.validBefore ?? Math.floor(Date.now() / 1000) + 300),
    nonce: (over.nonce ?? evm.Types.challengeHash(challenge)) as Hex,
  };
  const signature = await payer.signTypedData({
    domain: {
      name: offer.domain.name,
      version: offer.domain.version,
      chainId: request.methodDetails.chainId,
      verifyingContract: request.currency as Hex,
    },
    types: evm.Types.authorizationTypes,
    primaryType: 'TransferWithAuthorization',
    message,
  });
  return {
    type: 'authorization' as const,
    from: message.from,
    to: message.to,
    value: message.value.toString(),
    validAfter: '0',
    validBefore: message.validBefore.toString(),
    nonce: message.nonce,
    signature,
  };
}
