import { x402Client } from '@x402/core/client';
import type { PaymentPayload, PaymentRequired, PaymentRequirements, SettleResponse } from '@x402/core/types';
import type { PaymentRequiredV1, PaymentRequirementsV1 } from '@x402/core/types/v1';
import { ExactEvmSchemeV1 } from '@x402/evm/exact/v1/client';
import type { PrivateKeyAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../../../../src/config/config.js';
import { decodePayment } from '../../../../src/payments/reading/decode.js';
import { createFacilitator, type Facilitator } from '../../../../src/payments/facilitators/facilitator.js';
import { canonicalNetworkId, matchPayment } from '../../../../src/payments/reading/match.js';
import { BASE_MAINNET } from '../../../../src/shared/networks.js';
import { evmExactRail } from '../../../../src/payments/rails/evm/exact.js';
import { evmExactV1Rail } from '../../../../src/payments/rails/evm/v1.js';
import { railFor } from '../../../../src/payments/rails/index.js';
import { buildChallenge } from '../../../../src/payments/challenges/requirements.js';
import { annuity } from '../../../../tools/annuity.js';
import { smmOrder } from '../../../../tools/smm-order.js';
import { transfersEvm } from '../../../../tools/transfers-evm.js';
import { startBaseEnvironment, type BaseEnvironment } from '../../../support/chain/permit2-env.js';
import { withFlippedSignature } from '../../../support/chain/permit2-sign.js';
import { encodePayment } from '../../../support/payer.js';

let base: BaseEnvironment;
let config: Config;
let facilitator: Facilitator;
let v1: PaymentRequiredV1;
let entry: PaymentRequirements;

beforeAll(async () => {
  base = await startBaseEnvironment(4);
  config = loadConfig({ DATA_DIR: '/nonexistent-unused', LOG_LEVEL: 'silent', ...base.env });
  facilitator = await createFacilitator(config);
  v1 = buildChallenge(config, transfersEvm as never) as PaymentRequiredV1;
  const matched = matchPayment(v1.accepts as never, await sign(base.payers[0]!));
  if (!matched) throw new Error('the v1 entry does not match a v1 payment');
  entry = matched.requirements;
}, 120_000);
afterAll(async () => {
  await base?.stop();
});

/** An official v1 payment (`x402Client.registerV1('base', ExactEvmSchemeV1)`), optionally for a changed requirement. */
async function sign(payer: PrivateKeyAccount, change: Partial<PaymentRequirementsV1> = {}): Promise<PaymentPayload> {
  const client = new x402Client().registerV1('base', new ExactEvmSchemeV1(payer));
  client.setSpendControls({ allowedAssets: true });
  return client.createPaymentPayload({ ...v1, accepts: v1.accepts.map((a) => ({ ...a, ...change })) } as never);
}

const settle = (p: PaymentPayload, r: PaymentRequirements = entry) =>
  facilitator.client.settle(p, r) as Promise<SettleResponse>;

describe('matching a payment against the advertised entries', () => {
  it('names the CAIP-2 network of a version-1 short name', () => {
    expect(canonicalNetworkId('base')).toBe(BASE_MAINNET);
    expect(canonicalNetworkId('polygon')).toBe('eip155:137');
    expect(canonicalNetworkId('eip155:10')).toBe('eip155:10');
    expect(canonicalNetworkId('not-a-network')).toBe('not-a-network');
  });

  it('matches a v1 payment on scheme and network, and hands on our entry with its amount', async () => {
    const payment = await sign(base.payers[0]!);
    const matched = matchPayment(v1.accepts as never, payment)!;
    expect(matched.payload).toBe(payment);
    expect(matched.networkId).toBe(BASE_MAINNET);
    expect(matched.requirements).toMatchObject({ ...v1.accepts[0], amount: '1000' });
    expect(matchPayment(v1.accepts as never, { ...payment, network: 'base-sepolia' } as never)).toBeUndefined();
    expect(matchPayment(v1.accepts as never, { ...payment, scheme: 'upto' } as never)).toBeUndefined();
  });

  it("verifies the social order's base entry as the canonical eip155:8453 requirement after an exact echo", async () => {
    const smm = buildChallenge(config, smmOrder as never) as PaymentRequired;
    const client = new x402Client().register('base' as never, new ExactEvmSchemeV1(base.payers[0]!));
    client.setSpendControls({ maxAmountPerPayment: false });
    const payment = await client.createPaymentPayload(smm);
    const decoded = decodePayment({ source: 'payment-signature', value: encodePayment(payment) });
    if (!decoded.ok) throw new Error(decoded.message);
    expect(decoded.payload.accepted).toEqual(smm.accepts[0]); // kept whole: network `base`, both amount fields
    const matched = matchPayment(smm.accepts, decoded.payload)!;
    const canonical = {
      scheme: 'exact',
      network: BASE_MAINNET,
      asset: base.token,
      amount: '3000000',
      payTo: base.payTo,
      maxTimeoutSeconds: 300,
      extra: smm.accepts[0]!.extra,
    };
    expect(matched).toMatchObject({
      networkId: BASE_MAINNET,
      requirements: canonical,
      payload: { accepted: canonical, payload: payment.payload },
    });
    expect(
      matchPayment(smm.accepts, { ...decoded.payload, accepted: { ...decoded.payload.accepted, amount: '1' } }),
    ).toBeUndefined();
  });

  it('leaves a CAIP-2 entry as advertised', async () => {
    const tools = buildChallenge(config, annuity as never) as PaymentRequired;
    const exact = tools.accepts.find((a) => a.scheme === 'exact' && a.network === BASE_MAINNET)!;
    const payload = { x402Version: 2, accepted: exact, payload: {} } as PaymentPayload;
    expect(matchPayment(tools.accepts, payload)).toEqual({ payload, requirements: exact, networkId: BASE_MAINNET });
  });
});

describe('the version-1 EVM rail', () => {
  it('is the rail of the v1 entry, registered in-process for base only', async () => {
    const net = config.networks.find((n) => n.id === BASE_MAINNET)!;
    expect(railFor(entry, net)?.id).toBe(evmExactV1Rail.id); // the registry holds lazy rails: the same rail, its SDK loaded on use
    expect(facilitator.supports('base', 'exact')).toBe(true);
    for (const other of ['polygon', 'base-sepolia', 'avalanche'])
      expect(facilitator.supports(other, 'exact')).toBe(false);
    const v1Kinds = (await facilitator.client.getSupported()).kinds.filter((k) => k.x402Version === 1);
    expect(v1Kinds.map((k) => k.network)).toEqual(['base']);
  });

  it('uses the same replay key as v2 exact on eip155:8453, so one authorization cannot pay on both versions', async () => {
    const payment = await sign(base.payers[0]!);
    const asV1 = evmExactV1Rail.identify(payment, entry);
    const asV2 = evmExactRail.identify(payment, { ...entry, network: BASE_MAINNET });
    expect(asV1.ok && asV2.ok && asV1.replayKey === asV2.replayKey).toBe(true);
    expect(asV1).toMatchObject({ ok: true, payer: base.payers[0]!.address });
  });

  it('verifies and settles an official v1 payment on chain 8453 with the v1 facilitator scheme; a replay moves nothing', async () => {
    const payer = base.payers[1]!;
    const payment = await sign(payer);
    const before = await base.balance(payer.address);
    expect(await facilitator.client.verify(payment, entry)).toMatchObject({ isValid: true, payer: payer.address });
    const receipt = await settle(payment);
    expect(receipt).toMatchObject({ success: true, network: 'base', payer: payer.address });
    expect(await base.balance(payer.address)).toBe(before - 1000n);
    expect(
      await evmExactV1Rail.lookup!(
        { replayKey: 'k', payload: payment, requirements: entry, transaction: '' },
        config.networks.find((n) => n.id === BASE_MAINNET)!,
        config,
      ),
    ).toEqual({ type: 'settled', transaction: receipt.transaction }); // from the token's AuthorizationUsed log
    expect((await settle(payment)).success).toBe(false);
    expect(await base.balance(payer.address)).toBe(before - 1000n);
  });

  const tampered: [string, () => Promise<PaymentPayload>, string][] = [
    [
      'a payment that names another network',
      async () => ({ ...(await sign(base.payers[2]!)), network: 'base-sepolia' }) as PaymentPayload,
      'invalid_exact_evm_network_mismatch',
    ],
    [
      'a value below the price',
      () => sign(base.payers[2]!, { maxAmountRequired: '999' }),
      'invalid_exact_evm_authorization_value',
    ],
    [
      'another payee',
      () => sign(base.payers[2]!, { payTo: base.payers[3]!.address }),
      'invalid_exact_evm_recipient_mismatch',
    ],
    [
      'an expired authorization',
      () => sign(base.payers[2]!, { maxTimeoutSeconds: -120 }),
      'invalid_exact_evm_payload_authorization_valid_before',
    ],
    [
      'a signature for another token',
      () => sign(base.payers[2]!, { asset: '0x036CbD53842c5426634e7929541eC2318f3dCF7e' }),
      'invalid_exact_evm_signature',
    ],
    [
      'a corrupted signature',
      async () => withFlippedSignature(await sign(base.payers[2]!)),
      'invalid_exact_evm_signature',
    ],
  ];
  for (const [label, make, reason] of tampered) {
    it(`refuses ${label} (${reason}) and moves no funds`, async () => {
      const before = await base.balance(base.payers[2]!.address);
      const payment = await make();
      expect(await facilitator.client.verify(payment, entry)).toMatchObject({ isValid: false, invalidReason: reason });
      expect((await settle(payment)).success).toBe(false);
      expect(await base.balance(base.payers[2]!.address)).toBe(before);
    });
  }
});
