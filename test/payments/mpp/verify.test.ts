import type { Credential } from 'mppx';
import { beforeAll, describe, expect, it } from 'vitest';
import { issueChallenges, type MppOffer } from '../../../src/payments/mpp/challenge.js';
import { MppGate } from '../../../src/payments/mpp/gate.js';
import { loadMppx } from '../../../src/payments/mpp/lib.js';
import { matchCredential } from '../../../src/payments/mpp/verify.js';
import { buildChallenge } from '../../../src/payments/challenges/requirements.js';
import type { AnyPaidToolDefinition } from '../../../src/tool/tool.js';
import { annuity } from '../../../tools/annuity.js';
import { transfersEvm } from '../../../tools/transfers-evm.js';

// Reading a credential needs mppx, which the server loads with the first credential.
beforeAll(() => loadMppx());
import { payer, setup, signFor } from './support.js';

const tool = (t: unknown) => t as AnyPaidToolDefinition;
const { config, offers } = setup(tool(annuity));
const base = offers.find((o) => o.request.methodDetails.chainId === 8453)!;

async function credentialFor(
  offer: MppOffer = base,
  over: Parameters<typeof signFor>[2] = {},
  forTool = 'annuity',
  settings = config.mpp,
) {
  const [issued] = issueChallenges(settings, [offer], { tool: forTool }, 300);
  const challenge = issued!.challenge;
  return {
    challenge,
    payload: await signFor(challenge, offer, over),
    source: `did:pkh:eip155:${offer.request.methodDetails.chainId}:${payer.address}`,
  } as Credential.Credential;
}

const refusal = (result: ReturnType<typeof matchCredential>) =>
  result.ok ? 'accepted' : `${result.status} ${result.reason}`;

describe('matching an MPP credential to the route it was sent to', () => {
  it("turns a credential for one of the route's challenges into the x402 exact payment for exactly that entry", async () => {
    const credential = await credentialFor();
    const matched = matchCredential(credential, 'annuity', offers, config.mpp);
    expect(matched.ok).toBe(true);
    if (!matched.ok) return;
    const { signature, type: _type, ...authorization } = credential.payload as Record<string, string>;
    expect(matched.payment).toEqual({ x402Version: 2, accepted: base.entry, payload: { signature, authorization } });
    expect(matched.challengeId).toBe(credential.challenge.id);
    expect(matched.payer).toBe(payer.address);
  });

  it('builds a version-1 payment for the version-1 transfers route', async () => {
    const v1 = setup(tool(transfersEvm));
    const [issued] = issueChallenges(v1.config.mpp, v1.offers, { tool: 'transfers-evm' }, 60);
    const credential = {
      challenge: issued!.challenge,
      payload: await signFor(issued!.challenge, v1.offers[0]!),
    } as Credential.Credential;
    const matched = matchCredential(credential, 'transfers-evm', v1.offers, v1.config.mpp);
    expect(matched.ok && matched.payment).toMatchObject({ x402Version: 1, scheme: 'exact', network: 'base' });
  });

  it('refuses, naming why: another method, a forged id, another realm, another tool, an expired challenge, a price no longer offered', async () => {
    const good = await credentialFor();
    expect(
      refusal(
        matchCredential({ ...good, challenge: { ...good.challenge, method: 'tempo' } }, 'annuity', offers, config.mpp),
      ),
    ).toBe('400 mpp_method_unsupported');
    expect(
      refusal(
        matchCredential(
          { ...good, challenge: { ...good.challenge, id: 'forged-id-forged-id-forged-id-forged-id-for' } },
          'annuity',
          offers,
          config.mpp,
        ),
      ),
    ).toBe('402 mpp_invalid_challenge');
    const elsewhere = await credentialFor(base, {}, 'annuity', { ...config.mpp, realm: 'other.example' });
    expect(refusal(matchCredential(elsewhere, 'annuity', offers, config.mpp))).toBe('402 mpp_invalid_challenge');
    expect(
      refusal(matchCredential(await credentialFor(base, {}, 'card-validate'), 'annuity', offers, config.mpp)),
    ).toBe('402 mpp_invalid_challenge');
    expect(refusal(matchCredential(good, 'annuity', offers, config.mpp, Date.now() + 301_000))).toBe(
      '402 mpp_payment_expired',
    );
    const repriced = setup(tool({ ...annuity, price: { default: '2500' } })).offers;
    expect(refusal(matchCredential(good, 'annuity', repriced, config.mpp))).toBe('402 mpp_invalid_challenge');
  });

  it('refuses an authorization that does not pay the challenge: amount, recipient, nonce, expiry, source, shape', async () => {
    expect(refusal(matchCredential(await credentialFor(base, { value: '1' }), 'annuity', offers, config.mpp))).toBe(
      '402 mpp_amount_mismatch',
    );
    expect(
      refusal(matchCredential(await credentialFor(base, { to: payer.address }), 'annuity', offers, config.mpp)),
    ).toBe('402 mpp_recipient_mismatch');
    expect(
      refusal(
        matchCredential(await credentialFor(base, { nonce: `0x${'11'.repeat(32)}` }), 'annuity', offers, config.mpp),
      ),
    ).toBe('402 mpp_challenge_hash_mismatch');
    expect(
      refusal(matchCredential(await credentialFor(base, { validBefore: '1000' }), 'annuity', offers, config.mpp)),
    ).toBe('402 mpp_payment_expired');
    const good = await credentialFor();
    expect(
      refusal(
        matchCredential(
          { ...good, source: 'did:pkh:eip155:8453:0x0000000000000000000000000000000000000001' },
          'annuity',
          offers,
          config.mpp,
        ),
      ),
    ).toBe('402 mpp_source_mismatch');
    expect(refusal(matchCredential({ ...good, payload: { type: 'permit2' } }, 'annuity', offers, config.mpp))).toBe(
      '400 mpp_invalid_payload',
    );
  });
});

describe('the MPP gate of a process', () => {
  it('offers fresh challenges per route while on, none when off, and refuses credentials when off', () => {
    const on = new MppGate(config.mpp, config.networks, (t) => buildChallenge(config, t));
    expect(on.challenges(tool(annuity)).length).toBe(offers.length);
    const offConfig = setup(tool(annuity), { MPP: 'off' }).config;
    const off = new MppGate(offConfig.mpp, offConfig.networks, (t) => buildChallenge(offConfig, t));
    expect(off.challenges(tool(annuity))).toEqual([]);
    expect(off.read(tool(annuity), { ok: false, message: 'x' })).toMatchObject({
      type: 'rejected',
      status: 400,
      reason: 'mpp_disabled',
    });
  });

  it('uses the challenge id as the idempotency id of the credential (a retry of the same credential collects the stored result)', async () => {
    const gate = new MppGate(config.mpp, config.networks, (t) => buildChallenge(config, t));
    const credential = await credentialFor();
    expect(gate.read(tool(annuity), { ok: true, credential })).toMatchObject({
      type: 'payment',
      idempotencyId: `mpp_${credential.challenge.id}`,
    });
    expect(`mpp_${credential.challenge.id}`).toMatch(/^[A-Za-z0-9_-]{16,128}$/);
  });

  it('warns once at start when no shared key is set', () => {
    const warnings: string[] = [];
    const log = { warn: (m: string) => warnings.push(m), info: () => {}, error: () => {}, debug: () => {} } as never;
    const ephemeral = setup(tool(annuity), { MPP_SECRET_KEY: '' }).config;
    new MppGate(ephemeral.mpp, ephemeral.networks, (t) => buildChallenge(ephemeral, t), log);
    expect(warnings.join('\n')).toMatch(/MPP_SECRET_KEY is not set/);
  });
});
