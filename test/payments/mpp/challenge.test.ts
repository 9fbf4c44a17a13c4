import type { PaymentRequirements } from '@x402/core/types';
import { Challenge } from 'mppx';
import { describe, expect, it } from 'vitest';
import { boundTool, issueChallenges } from '../../../src/payments/mpp/challenge.js';
import type { AnyPaidToolDefinition } from '../../../src/tool/tool.js';
import { annuity } from '../../../tools/annuity.js';
import { smmOrder } from '../../../tools/smm-order.js';
import { tokenReport } from '../../../tools/token-report.js';
import { transfersEvm } from '../../../tools/transfers-evm.js';
import { SECRET, setup } from './support.js';

const tool = (t: unknown) => t as AnyPaidToolDefinition;

describe('the MPP offers of a route', () => {
  it('are every EVM exact EIP-3009 option of the tools group, at the same price, pay-to, asset and EIP-712 domain (no Permit2 upto, no other family)', () => {
    const { challenge, offers } = setup(tool(annuity));
    const expected = (challenge.accepts as PaymentRequirements[]).filter(
      (a) => a.network.startsWith('eip155:') && a.scheme === 'exact',
    );
    expect(expected.length).toBeGreaterThan(3);
    expect(offers.map((o) => o.entry)).toEqual(expected);
    for (const offer of offers) {
      const { entry } = offer;
      expect(offer.x402Version).toBe(2);
      expect(offer.request).toEqual({
        amount: entry.amount,
        currency: entry.asset,
        recipient: entry.payTo,
        methodDetails: {
          chainId: Number(entry.network.slice('eip155:'.length)),
          credentialTypes: ['authorization'],
          decimals: 6,
        },
      });
      expect(offer.domain).toEqual({ name: entry.extra.name, version: entry.extra.version });
    }
    expect((challenge.accepts as PaymentRequirements[]).some((a) => a.scheme === 'upto')).toBe(true);
  });

  it('follow the other groups: Base for the token report, the short-named `base` entry of the social order, the version-1 transfers entry', () => {
    const token = setup(tool(tokenReport)).offers;
    expect(token.map((o) => o.request.methodDetails.chainId)).toEqual([8453]);
    const smm = setup(tool(smmOrder)).offers;
    expect(smm).toHaveLength(1);
    expect(smm[0]!.entry.network).toBe('base');
    expect(smm[0]!.request.methodDetails.chainId).toBe(8453);
    const transfers = setup(tool(transfersEvm)).offers;
    expect(transfers).toHaveLength(1);
    expect(transfers[0]!.x402Version).toBe(1);
    expect(transfers[0]!.request.amount).toBe(
      (transfers[0]!.entry as unknown as { maxAmountRequired: string }).maxAmountRequired,
    );
  });
});

describe('issued challenges', () => {
  it("are unique, bound by the HMAC id to their fields and to the tool, and expire after the entry's validity window", () => {
    const { config, offers } = setup(tool(annuity));
    const now = Date.parse('2026-11-25T12:00:00.000Z');
    const issued = [
      ...issueChallenges(config.mpp, offers, { tool: 'annuity' }, 300, now),
      ...issueChallenges(config.mpp, offers, { tool: 'annuity' }, 300, now),
    ];
    expect(new Set(issued.map((i) => i.challenge.id)).size).toBe(issued.length);
    for (const { challenge, header } of issued) {
      expect(challenge).toMatchObject({
        realm: 'tollbooth.test',
        method: 'evm',
        intent: 'charge',
        expires: '2026-11-25T12:05:00Z',
      });
      expect(Challenge.verify(challenge, { secretKey: SECRET })).toBe(true);
      expect(Challenge.verify(challenge, { secretKey: `${SECRET}-other` })).toBe(false);
      expect(boundTool(challenge)).toBe('annuity');
      expect(Challenge.deserialize(header)).toEqual(challenge);
      expect('meta' in challenge).toBe(false);
    }
  });

  it("are exactly what mppx's Challenge.from and Challenge.serialize make of the same fields, the header without optional whitespace", () => {
    const { config, offers } = setup(tool(annuity));
    for (const { challenge, header } of issueChallenges(config.mpp, offers, { tool: 'annuity' }, 300)) {
      const meta = JSON.parse(Buffer.from(challenge.opaque!, 'base64url').toString('utf8')) as Record<string, string>;
      const { meta: _meta, ...official } = Challenge.from({
        realm: challenge.realm,
        method: 'evm',
        intent: 'charge',
        request: challenge.request,
        expires: challenge.expires,
        meta,
        secretKey: SECRET,
      });
      expect(challenge).toEqual(official);
      expect(header).toBe(Challenge.serialize(official as Challenge.Challenge).replaceAll('", ', '",'));
      expect(meta).toEqual({ s: expect.stringMatching(/^[A-Za-z0-9_-]{16}$/), t: 'annuity' });
    }
  });

  it('are none when MPP is off', () => {
    const { config } = setup(tool(annuity), { MPP: 'off' });
    expect(config.mpp.enabled).toBe(false);
  });
});
