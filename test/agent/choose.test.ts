import type { PaymentRequirements } from '@x402/core/types';
import { generatePrivateKey } from 'viem/accounts';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  atomicCap,
  chooseFromOffers,
  chooseOption,
  toUsdMicros,
  usd,
  type ChoiceRules,
} from '../../src/agent/choose.js';
import { offerOf, type MppChallenge } from '../../src/agent/mpp.js';
import { loadWallets, type Wallets } from '../../src/agent/wallets.js';
import { Keypair } from '@stellar/stellar-sdk';
import { loadConfig } from '../../src/config/config.js';
import { DEV_PAY_TO, ZERO_ADDRESSES } from '../../src/shared/dev-addresses.js';
import { buildChallenge } from '../../src/payments/challenges/requirements.js';
import { annuity } from '../../tools/annuity.js';
import { transfersEvm } from '../../tools/transfers-evm.js';
import { PAY_TO_ENV } from '../support/pay-to.js';

// Real pay-to addresses: options paying to the development placeholders are never chosen (see the last describe).
const config = loadConfig({ LOG_LEVEL: 'silent', ...PAY_TO_ENV, PAY_TO_STELLAR: Keypair.random().publicKey() });
const accepts = buildChallenge(config, annuity).accepts as PaymentRequirements[];
const rules = (over: Partial<ChoiceRules> = {}): ChoiceRules => ({
  networks: config.networks,
  preference: [],
  maxMicrosPerCall: 100_000,
  ...over,
});
let evmOnly: Wallets;

beforeAll(async () => {
  evmOnly = await loadWallets({ evm: generatePrivateKey() }, config.networks);
});

describe('choosing the option to pay', () => {
  it("takes the cheapest option in dollars, exact before upto at the same price, then the server's order", () => {
    const choice = chooseOption(accepts, 2, evmOnly, rules());
    expect(choice.type).toBe('chosen');
    if (choice.type !== 'chosen') return;
    expect(choice.chosen).toMatchObject({ network: 'eip155:8453', usdMicros: 1000 });
    expect(choice.chosen.option.scheme).toBe('exact');
    expect(choice.options.find((o) => o.network === 'eip155:10')).toMatchObject({ usdMicros: 2000 });
    expect(choice.options.find((o) => o.option.scheme === 'upto')?.rejected).toBeUndefined();
  });

  it("breaks ties by the user's preference order, but never prefers a dearer option", () => {
    const preferred = chooseOption(accepts, 2, evmOnly, rules({ preference: ['eip155:42161', 'eip155:137'] }));
    expect(preferred.type === 'chosen' && preferred.chosen.network).toBe('eip155:42161');
    const dearer = chooseOption(accepts, 2, evmOnly, rules({ preference: ['eip155:10'] }));
    expect(dearer.type === 'chosen' && dearer.chosen.network).toBe('eip155:8453');
  });

  it('pays only on allowed networks, and says why each other option is left out', () => {
    const choice = chooseOption(accepts, 2, evmOnly, rules({ allowed: ['eip155:10'] }));
    expect(choice.type === 'chosen' && choice.chosen).toMatchObject({ network: 'eip155:10', usdMicros: 2000 });
    const reasons = Object.fromEntries(choice.options.map((o) => [`${o.option.scheme} ${o.network}`, o.rejected]));
    expect(reasons).toMatchObject({
      'exact eip155:8453': 'network_not_allowed',
      'upto eip155:8453': 'network_not_allowed',
      'exact solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp': 'no_wallet',
      'exact stellar:pubnet': 'no_wallet',
      'exact algorand:wGHE2Pwdvd7S12BL5FaOP20EGYesN73ktiC1qzkkit8=': 'no_wallet',
    });
  });

  it('reports the cheapest option when even it is over the per-call limit', () => {
    const choice = chooseOption(accepts, 2, evmOnly, rules({ maxMicrosPerCall: 999 }));
    expect(choice.type).toBe('over_cap');
    if (choice.type === 'over_cap')
      expect(choice.cheapest).toMatchObject({ network: 'eip155:8453', usdMicros: 1000, rejected: 'over_per_call_cap' });
  });

  it('pays nothing it cannot value: an asset neither the network table nor the scheme knows', () => {
    const unknown = accepts.map((a) => ({ ...a, asset: '0x000000000000000000000000000000000000dEaD' }));
    const choice = chooseOption(unknown, 2, evmOnly, rules());
    expect(choice.type).toBe('none_payable');
    expect(choice.options.filter((o) => o.family === 'evm').every((o) => o.rejected === 'unknown_asset')).toBe(true);
  });

  it('finds nothing payable when the only allowed networks lack a wallet', () => {
    expect(chooseOption(accepts, 2, evmOnly, rules({ allowed: ['solana:*'] })).type).toBe('none_payable');
  });

  it('values a version-1 entry by its short network name (base → eip155:8453) and maxAmountRequired', () => {
    const v1 = buildChallenge(config, transfersEvm).accepts as PaymentRequirements[];
    const choice = chooseOption(v1, 1, evmOnly, rules({ allowed: ['eip155:8453'] }));
    expect(choice.type === 'chosen' && choice.chosen).toMatchObject({
      network: 'eip155:8453',
      amount: 1000n,
      usdMicros: 1000,
    });
  });
});

describe('dollar arithmetic', () => {
  it('counts millionths of a dollar, rounding up, for 6, 7 and 2 decimals', () => {
    expect(toUsdMicros(1000n, 6)).toBe(1000);
    expect(toUsdMicros(10_000n, 7)).toBe(1000);
    expect(toUsdMicros(1n, 7)).toBe(1);
    expect(toUsdMicros(5n, 2)).toBe(50_000);
  });

  it('turns a dollar cap into the largest amount of an asset within it', () => {
    expect(atomicCap(1000, 6)).toBe(1000n);
    expect(atomicCap(1000, 7)).toBe(10_000n);
    expect(atomicCap(15_000, 2)).toBe(1n);
  });

  it('shows dollars with two to six decimals', () => {
    expect([0, 1000, 3500, 500_000, 1_000_000, 3_000_000].map(usd)).toEqual([
      '$0.00',
      '$0.001',
      '$0.0035',
      '$0.50',
      '$1.00',
      '$3.00',
    ]);
  });
});

describe('choosing between x402 and MPP offers', () => {
  const BASE_USDC = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';
  const mppChallenge = (
    over: { method?: string; chainId?: number; currency?: string; amount?: string } = {},
  ): MppChallenge => ({
    id: `id-${over.chainId ?? 8453}-${over.amount ?? '1000'}`,
    realm: 'seller.test',
    method: over.method ?? 'evm',
    intent: 'charge',
    request: {
      amount: over.amount ?? '1000',
      currency: over.currency ?? BASE_USDC,
      recipient: '0x2222222222222222222222222222222222222222',
      methodDetails: { chainId: over.chainId ?? 8453, credentialTypes: ['authorization'] },
    },
  });
  const x402 = { x402Version: 2 as const, accepts };

  it('prefers x402 when both protocols are offered, and MPP when PAYMENT_PROTOCOLS puts it first', () => {
    const offers = { x402, mpp: [offerOf(mppChallenge())] };
    const byDefault = chooseFromOffers(offers, evmOnly, rules());
    expect(byDefault.type === 'chosen' && byDefault.chosen.protocol).toBe('x402');
    const mppFirst = chooseFromOffers(offers, evmOnly, rules({ protocols: ['mpp', 'x402'] }));
    expect(mppFirst.type === 'chosen' && mppFirst.chosen).toMatchObject({
      protocol: 'mpp',
      network: 'eip155:8453',
      usdMicros: 1000,
    });
  });

  it('pays an MPP-only server, valuing its evm/charge by the network table like an exact entry', () => {
    const choice = chooseFromOffers({ mpp: [offerOf(mppChallenge())] }, evmOnly, rules());
    expect(choice.type === 'chosen' && choice.chosen).toMatchObject({
      protocol: 'mpp',
      network: 'eip155:8453',
      amount: 1000n,
      decimals: 6,
      usdMicros: 1000,
    });
  });

  it('applies the same filters to MPP: allowed networks, per-call limit, protocols, and what it cannot sign or value', () => {
    const offers = {
      mpp: [
        offerOf(mppChallenge()),
        offerOf(mppChallenge({ method: 'tempo' })),
        offerOf(mppChallenge({ currency: '0x000000000000000000000000000000000000dEaD', chainId: 137 })),
      ],
    };
    const reasons = (r: Partial<ChoiceRules>) =>
      chooseFromOffers(offers, evmOnly, rules(r)).options.map((o) => o.rejected);
    expect(reasons({ allowed: ['eip155:137'] })).toEqual([
      'network_not_allowed',
      'unsupported_scheme',
      'unknown_asset',
    ]);
    expect(reasons({ maxMicrosPerCall: 999 })).toEqual(['over_per_call_cap', 'unsupported_scheme', 'unknown_asset']);
    expect(reasons({ protocols: ['x402'] })).toEqual([
      'protocol_not_allowed',
      'protocol_not_allowed',
      'protocol_not_allowed',
    ]);
    expect(chooseFromOffers(offers, evmOnly, rules({ maxMicrosPerCall: 999 })).type).toBe('over_cap');
  });

  it('leaves x402 out when PAYMENT_PROTOCOLS allows MPP only', () => {
    const choice = chooseFromOffers({ x402, mpp: [] }, evmOnly, rules({ protocols: ['mpp'] }));
    expect(choice.type).toBe('none_payable');
    expect(new Set(choice.options.map((o) => o.rejected))).toEqual(new Set(['protocol_not_allowed']));
  });
});

describe("options paying to Tollbooth's development placeholders", () => {
  const devServer = loadConfig({ LOG_LEVEL: 'silent' });
  const recipient = (address: string): MppChallenge => ({
    id: `id-${address}`,
    realm: 'seller.test',
    method: 'evm',
    intent: 'charge',
    request: {
      amount: '1000',
      currency: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
      recipient: address,
      methodDetails: { chainId: 8453, credentialTypes: ['authorization'] },
    },
  });

  it("are never chosen: a development server's challenge (DEV_PAY_TO everywhere) has nothing payable", () => {
    const dev = buildChallenge(devServer, annuity).accepts as PaymentRequirements[];
    const choice = chooseOption(dev, 2, evmOnly, rules());
    expect(choice.type).toBe('none_payable');
    expect(new Set(choice.options.map((o) => o.rejected))).toEqual(new Set(['placeholder_pay_to']));
  });

  it('refuse the zero address and the placeholder in any letter case, leaving real options payable', () => {
    const [first] = accepts;
    const entries = [
      { ...first!, payTo: DEV_PAY_TO.evm.toLowerCase() },
      { ...first!, payTo: ZERO_ADDRESSES.evm },
      { ...first!, payTo: '0x2222222222222222222222222222222222222222' },
    ];
    const choice = chooseOption(entries, 2, evmOnly, rules());
    expect(choice.options.map((o) => o.rejected)).toEqual(['placeholder_pay_to', 'placeholder_pay_to', undefined]);
    expect(choice.type === 'chosen' && choice.chosen.option.payTo).toBe('0x2222222222222222222222222222222222222222');
  });

  it('refuse an MPP evm/charge whose recipient is a placeholder', () => {
    const offers = { mpp: [offerOf(recipient(DEV_PAY_TO.evm)), offerOf(recipient(ZERO_ADDRESSES.evm))] };
    const choice = chooseFromOffers(offers, evmOnly, rules());
    expect(choice.type).toBe('none_payable');
    expect(choice.options.map((o) => o.rejected)).toEqual(['placeholder_pay_to', 'placeholder_pay_to']);
  });
});
