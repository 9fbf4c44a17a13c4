import { x402ResourceServer } from '@x402/core/server';
import type { PaymentPayload, PaymentRequirements, SchemeNetworkServer } from '@x402/core/types';
import { ExactStellarScheme as OfficialStellarServerScheme } from '@x402/stellar/exact/server';
import { describe, expect, it } from 'vitest';
import { DEFAULT_NETWORKS, STELLAR_PUBNET } from '../../../../src/shared/networks.js';
import { stellarExactRail } from '../../../../src/payments/rails/stellar/rail.js';

const pubnet = DEFAULT_NETWORKS.find((n) => n.id === STELLAR_PUBNET)!;
const requirements: PaymentRequirements = {
  scheme: 'exact',
  network: STELLAR_PUBNET,
  asset: pubnet.asset,
  amount: '10000',
  payTo: 'GDPN5XW633PN5XW633PN5XW633PN5XW633PN5XW633PN5XW633PN5MZU',
  maxTimeoutSeconds: 300,
  extra: { areFeesSponsored: true },
};
const payload = { x402Version: 2, accepted: requirements, payload: { transaction: '' } } as PaymentPayload;

describe('Stellar exact server scheme on the @x402/core 2.27 resource server', () => {
  it('registers and resolves the verify-then-settle (authorization) flow', () => {
    const server = new x402ResourceServer();
    server.register(STELLAR_PUBNET, stellarExactRail.serverScheme(pubnet));
    expect(server.getPaymentFlow(payload, requirements)).toBe('authorization');
  });

  it('prices in 7-decimal units of the network’s asset and marks fees as sponsored', async () => {
    const scheme = stellarExactRail.serverScheme(pubnet);
    expect(await scheme.parsePrice('$0.01', STELLAR_PUBNET)).toEqual({
      amount: '100000',
      asset: pubnet.asset,
      extra: {},
    });
    expect(scheme.getAssetDecimals?.(pubnet.asset, STELLAR_PUBNET)).toBe(7);
    const { extra } = await scheme.enhancePaymentRequirements(
      { ...requirements, extra: {} },
      { x402Version: 2, scheme: 'exact', network: STELLAR_PUBNET },
      [],
    );
    expect(extra).toEqual({ areFeesSponsored: true });
  });

  // Why the official server scheme is not used (see src/payments/rails/stellar/rail.ts). If this starts failing,
  // @x402/stellar has caught up with core 2.27 and the choice can be revisited.
  it('is needed because the official @x402/stellar 2.9 server scheme still breaks the 2.27 resource server', () => {
    const server = new x402ResourceServer();
    server.register(STELLAR_PUBNET, new OfficialStellarServerScheme() as unknown as SchemeNetworkServer);
    expect(() => server.getPaymentFlow(payload, requirements)).toThrow(TypeError);
  });
});
