import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { AnyToolDefinition } from '../../src/tool/tool.js';
import { cryptoIndicators } from '../../tools/crypto-indicators.js';
import { developmentIndicator } from '../../tools/development-indicator.js';
import { dexTopPools } from '../../tools/dex-top-pools.js';
import { perpKlines } from '../../tools/perp-klines.js';
import { smmOrder } from '../../tools/smm-order.js';
import { stablecoins } from '../../tools/stablecoins.js';
import { testnetFund } from '../../tools/testnet-fund.js';
import { tokenReport } from '../../tools/token-report.js';
import { transfersEvm } from '../../tools/transfers-evm.js';
import { venueEvent } from '../../tools/venue-event.js';
import { walletReadiness } from '../../tools/wallet-readiness.js';

const EVM = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';
const SOL = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
const T = 1754301600000;

interface Case {
  def: AnyToolDefinition;
  group: AnyToolDefinition['group'];
  method: 'GET' | 'POST';
  path: string;
  price: AnyToolDefinition['price'];
  valid: Record<string, unknown>;
  sampleOutput: Record<string, unknown>;
}

const tripleSeries = [{ t: T, v: 1 }];
const cases: Case[] = [
  {
    def: cryptoIndicators,
    group: 'tools',
    method: 'POST',
    path: '/api/crypto-indicators',
    price: { default: '5000', optimism: '6000', stellar: '50000' },
    valid: { coin: 'BTC' },
    sampleOutput: {
      coin: 'BTC',
      source: 'hyperliquid',
      interval: '1h',
      candles: 200,
      window: { from: T, to: T },
      lastClose: 1,
      indicators: {
        atr: { value: 1, period: 14, pctOfClose: 0.5, series: tripleSeries },
        ema: { ema20: 1, ema50: 1, ema200: null, series: [{ t: T, ema20: 1, ema50: null, ema200: null }] },
        rsi: { value: 55, period: 14, series: tripleSeries },
        sma: { sma20: 1, sma50: 1, series: [{ t: T, sma20: 1, sma50: 1 }] },
        macd: {
          fast: 12,
          slow: 26,
          signal: 9,
          value: 1,
          signalValue: 1,
          histogram: 0,
          series: [{ t: T, macd: 1, signal: 1, histogram: 0 }],
        },
        vwap: { value: 1, series: tripleSeries },
        bollinger: {
          mult: 2,
          period: 20,
          lower: 0,
          upper: 2,
          middle: 1,
          percentB: 0.5,
          bandwidthPct: 200,
          series: [{ t: T, lower: 0, upper: 2, middle: 1 }],
        },
      },
      summary: { text: 'x', trend: 'bullish', rsiZone: 'neutral', macdCross: 'none', macdHistogram: 'rising' },
      fetchedAt: '2026-01-01T00:00:00.000Z',
    },
  },
  {
    def: developmentIndicator,
    group: 'tools',
    method: 'GET',
    path: '/api/development-indicator',
    price: { default: '10000', optimism: '11000', stellar: '100000' },
    valid: { country: 'BR', indicator: 'NY.GDP.MKTP.CD' },
    sampleOutput: {
      country: 'BR',
      indicator: 'NY.GDP.MKTP.CD',
      indicatorName: 'GDP (current US$)',
      count: 1,
      series: [{ year: 2023, value: 2.1e12 }],
    },
  },
  {
    def: stablecoins,
    group: 'tools',
    method: 'POST',
    path: '/api/stablecoins',
    price: { default: '3000', optimism: '4000', stellar: '30000' },
    valid: {},
    sampleOutput: {
      source: 'defillama',
      fetchedAt: '2026-01-01T00:00:00.000Z',
      cached: true,
      filters: { peg: 'USD', chain: null, search: null, mechanism: null },
      totals: { assetCount: 400, circulatingUsd: 3e11 },
      matched: 1,
      count: 1,
      stablecoins: [
        {
          id: '2',
          name: 'USD Coin',
          rank: 1,
          symbol: 'USDC',
          geckoId: 'usd-coin',
          price: 0.9998,
          pegType: 'peggedUSD',
          pegCurrency: 'USD',
          pegMechanism: 'fiat-backed',
          pegDeviationPct: -0.02,
          circulating: 7e10,
          circulatingUsd: 7e10,
          change1dPct: 0.1,
          change7dPct: null,
          change30dPct: -0.5,
          chainCount: 1,
          chains: [{ chain: 'Ethereum', circulating: 4e10 }],
        },
      ],
    },
  },
  {
    def: perpKlines,
    group: 'tools',
    method: 'POST',
    path: '/api/perp-klines',
    price: { default: '1000', optimism: '2000', stellar: '10000' },
    valid: { coin: 'ETH' },
    sampleOutput: {
      source: 'hyperliquid',
      coin: 'ETH',
      interval: '1h',
      count: 1,
      candles: [{ t: T, o: 1, h: 2, l: 0.5, c: 1.5, v: 10, trades: 3 }],
      summary: { open: 1, close: 1.5, high: 2, low: 0.5, volume: 10, changePct: 50 },
      fetchedAt: '2026-01-01T00:00:00.000Z',
    },
  },
  {
    def: testnetFund,
    group: 'tools',
    method: 'POST',
    path: '/api/testnet-fund',
    price: { default: '1000', optimism: '2000', stellar: '10000' },
    valid: { address: EVM },
    sampleOutput: {
      funded: true,
      network: 'base-sepolia',
      token: 'usdc',
      transactionHash: '0xabc',
      explorer: 'https://sepolia.basescan.org/tx/0xabc',
    },
  },
  {
    def: venueEvent,
    group: 'tools',
    method: 'POST',
    path: '/api/venue-event',
    price: { default: '2000', optimism: '3000', stellar: '20000' },
    valid: { eventTicker: 'KXFEDDECISION-25DEC' },
    sampleOutput: {
      eventTicker: 'E',
      title: 't',
      subTitle: 's',
      seriesTicker: 'S',
      category: 'c',
      mutuallyExclusive: true,
      marketCount: 1,
      source: 'venue',
      markets: [
        {
          ticker: 'M',
          eventTicker: 'E',
          title: 't',
          venue: 'v',
          status: 'active',
          yesBid: 0.5,
          yesAsk: 0.6,
          noBid: 0.4,
          noAsk: 0.5,
          lastPrice: 0.55,
          volume: 10.5,
          openInterest: 3,
          venueUrl: 'https://example.com/m',
        },
      ],
    },
  },
  {
    def: walletReadiness,
    group: 'tools',
    method: 'POST',
    path: '/api/skill/wallet-readiness',
    price: { default: '50000', optimism: '51000', stellar: '500000' },
    valid: { address: EVM },
    sampleOutput: {
      pack: 'wallet-readiness',
      args: { address: EVM, solanaAddress: null },
      steps: [
        { ok: true, slug: 'wallet-balances', result: { usdc: '1.0' } },
        { ok: false, slug: 'gas-snapshot', result: { error: 'x' } },
      ],
      summary: '1/2 steps succeeded',
    },
  },
  {
    def: dexTopPools,
    group: 'tools',
    method: 'POST',
    path: '/api/dex-top-pools',
    price: { default: '1000', optimism: '2000', stellar: '10000' },
    valid: {},
    sampleOutput: {
      source: 'defillama',
      chain: 'all',
      project: 'all',
      count: 1,
      pools: [{ pool: 'uuid', chain: 'Ethereum', project: 'lido', symbol: 'STETH', tvlUsd: 100, apy: 2.7 }],
    },
  },
  {
    def: tokenReport,
    group: 'token',
    method: 'GET',
    path: '/report',
    price: { default: '150000' },
    valid: { token: EVM },
    sampleOutput: {
      schemaVersion: '2.0.0',
      chain: 'eth',
      token: EVM,
      risk_level: 'low',
      pair_count: 3,
      sources: ['GoPlus', 'DexScreener'],
      name: 'USD Coin',
      symbol: 'USDC',
      verified: true,
      risk_flags: [],
      risk_score: 5,
      is_honeypot: false,
      liquidity_usd: 1e6,
      token_age_days: 900,
      ownership_renounced: false,
      top10_concentration_pct: 40,
      verdict: 'One. Two. Three.',
    },
  },
  {
    def: smmOrder,
    group: 'smm',
    method: 'POST',
    path: '/smm/v1/smm-order',
    price: { default: '3000000' },
    valid: { link: 'https://example.com/post/1', quantity: 100, serviceId: 1 },
    sampleOutput: { status: 'ordered', orderId: '23501', chargeUsd: 0.9 },
  },
  {
    def: transfersEvm,
    group: 'transfers',
    method: 'GET',
    path: '/api/transfers/evm',
    price: { default: '1000' },
    valid: { address: EVM },
    sampleOutput: {
      address: EVM,
      chain: 'base',
      fromBlock: 0,
      toBlock: 100,
      count: 1,
      transfers: [
        {
          hash: '0xabc',
          blockNumber: 5,
          timestamp: '2026-01-01T00:00:00.000Z',
          from: EVM,
          to: EVM,
          token: EVM,
          symbol: 'USDC',
          decimals: 6,
          value: '1500000',
          formatted: '1.5',
          direction: 'self',
        },
      ],
    },
  },
];

/** Dotted paths of the issues a failed parse reports. */
function issuePaths(schema: z.ZodType, input: unknown): string[] {
  const result = schema.safeParse(input);
  expect(result.success, `expected ${JSON.stringify(input)} to be rejected`).toBe(false);
  return result.success ? [] : result.error.issues.map((issue) => issue.path.join('.'));
}

/** Messages of the issues a failed parse reports at one path. */
function messagesAt(schema: z.ZodType, input: unknown, path: string): string[] {
  const result = schema.safeParse(input);
  expect(result.success).toBe(false);
  return result.success ? [] : result.error.issues.filter((i) => i.path.join('.') === path).map((i) => i.message);
}

describe.each(cases)('$def.name definition', (c) => {
  it('has the route, group and price of the specification', () => {
    expect(c.def.method).toBe(c.method);
    expect(c.def.path).toBe(c.path);
    expect(c.def.group).toBe(c.group);
    expect(c.def.price).toEqual(c.price);
    expect(c.def.description).not.toMatch(/PLACEHOLDER|TODO/);
    expect(c.def.description).toMatch(/\$\d/);
  });

  it('describes every input field and converts both schemas to JSON Schema', () => {
    const input = z.toJSONSchema(c.def.input, { io: 'input' }) as {
      properties: Record<string, { description?: string }>;
    };
    for (const [field, prop] of Object.entries(input.properties)) {
      expect(prop.description, `${c.def.name}.${field}`).toBeTruthy();
    }
    expect(() => z.toJSONSchema(c.def.output, { io: 'output' })).not.toThrow();
  });

  it('accepts a well-formed response', () => {
    expect(c.def.output.safeParse(c.sampleOutput).error?.issues).toBeUndefined();
  });
});

describe('annotations', () => {
  it('marks lookups read-only and the faucet and order as side-effecting', () => {
    for (const c of cases.filter((x) => x.def !== testnetFund && x.def !== smmOrder)) {
      expect(c.def.annotations, c.def.name).toEqual({ readOnlyHint: true, idempotentHint: true, openWorldHint: true });
    }
    const sideEffects = { readOnlyHint: false, idempotentHint: false, openWorldHint: true, destructiveHint: false };
    expect(testnetFund.annotations).toEqual(sideEffects);
    expect(smmOrder.annotations).toEqual(sideEffects);
  });
});

describe('crypto-indicators input', () => {
  const s = cryptoIndicators.input;
  it('applies the defaults', () => {
    expect(s.parse({ coin: ' BTC ' })).toEqual({
      coin: 'BTC',
      limit: 200,
      points: 20,
      interval: '1h',
      indicators: ['rsi', 'macd', 'ema', 'sma', 'bollinger', 'atr', 'vwap'],
    });
  });
  it('rejects out-of-range values naming the field', () => {
    expect(issuePaths(s, { coin: 'BTC', limit: 501 })).toContain('limit');
    expect(issuePaths(s, { coin: 'BTC', limit: 1.5 })).toContain('limit');
    expect(issuePaths(s, { coin: 'BTC', points: 101 })).toContain('points');
    expect(issuePaths(s, { coin: 'BTC', points: 0 })).toContain('points');
    expect(issuePaths(s, { coin: 'BTC', interval: '2d' })).toContain('interval');
    expect(issuePaths(s, { coin: 'BTC', indicators: ['rsi', 'kdj'] })).toContain('indicators.1');
    expect(issuePaths(s, { coin: 'BTC', indicators: ['rsi', 'rsi'] })).toContain('indicators.1');
    expect(issuePaths(s, { coin: 'BTC', indicators: [] })).toContain('indicators');
    expect(issuePaths(s, {})).toContain('coin');
  });
  it('accepts a limit below an indicator minimum (the answer marks those values unavailable)', () => {
    expect(s.parse({ coin: 'BTC', limit: 20, indicators: ['macd', 'rsi'] }).limit).toBe(20);
    expect(s.parse({ coin: 'BTC', limit: 1 }).limit).toBe(1);
  });
});

describe('perp-klines input', () => {
  it('applies the defaults and limits', () => {
    expect(perpKlines.input.parse({ coin: 'ETH' })).toEqual({ coin: 'ETH', limit: 100, interval: '1h' });
    expect(issuePaths(perpKlines.input, { coin: 'ETH', limit: 501 })).toContain('limit');
    expect(issuePaths(perpKlines.input, { coin: 'ETH', limit: 0 })).toContain('limit');
  });
});

describe('stablecoins input', () => {
  const s = stablecoins.input;
  it('applies the defaults and upper-cases the peg', () => {
    expect(s.parse({})).toEqual({ peg: 'USD', limit: 20 });
    expect(s.parse({ peg: 'eur' }).peg).toBe('EUR');
    expect(s.parse({ peg: 'all' }).peg).toBe('ALL');
  });
  it('rejects bad filters naming the field', () => {
    expect(issuePaths(s, { limit: 101 })).toContain('limit');
    expect(issuePaths(s, { mechanism: 'rebase' })).toContain('mechanism');
    expect(issuePaths(s, { peg: 'US D' })).toContain('peg');
  });
});

describe('dex-top-pools input', () => {
  it('applies the default and the 1–50 range', () => {
    expect(dexTopPools.input.parse({})).toEqual({ limit: 10 });
    expect(issuePaths(dexTopPools.input, { limit: 51 })).toContain('limit');
    expect(issuePaths(dexTopPools.input, { limit: 0 })).toContain('limit');
  });
});

describe('testnet-fund input', () => {
  const s = testnetFund.input;
  it('defaults to usdc on base-sepolia', () => {
    expect(s.parse({ address: EVM })).toEqual({ address: EVM, token: 'usdc', network: 'base-sepolia' });
    expect(s.parse({ address: SOL, network: 'solana-devnet', token: 'sol' }).token).toBe('sol');
  });
  it('rejects an address that does not match the network, on the address field', () => {
    expect(messagesAt(s, { address: SOL }, 'address')[0]).toMatch(/EVM address for network base-sepolia/);
    expect(messagesAt(s, { address: EVM, network: 'solana-devnet' }, 'address')[0]).toMatch(/Solana address/);
  });
  it('rejects a token offered on the other network', () => {
    expect(messagesAt(s, { address: EVM, token: 'sol' }, 'token')[0]).toMatch(
      /only available on network solana-devnet/,
    );
    expect(messagesAt(s, { address: SOL, network: 'solana-devnet', token: 'eth' }, 'token')[0]).toMatch(/base-sepolia/);
    expect(issuePaths(s, { address: EVM, network: 'ethereum-sepolia' })).toContain('network');
  });
});

describe('venue-event input', () => {
  it('trims and upper-cases the ticker and rejects bad tickers', () => {
    expect(venueEvent.input.parse({ eventTicker: ' kxfed-25dec ' })).toEqual({ eventTicker: 'KXFED-25DEC' });
    expect(issuePaths(venueEvent.input, { eventTicker: '' })).toContain('eventTicker');
    expect(issuePaths(venueEvent.input, { eventTicker: 'A/B' })).toContain('eventTicker');
    expect(issuePaths(venueEvent.input, { eventTicker: 'A'.repeat(65) })).toContain('eventTicker');
  });
});

describe('wallet-readiness input', () => {
  it('requires an EVM address and accepts an optional Solana address', () => {
    expect(walletReadiness.input.parse({ address: EVM, solanaAddress: SOL })).toEqual({
      address: EVM,
      solanaAddress: SOL,
    });
    expect(issuePaths(walletReadiness.input, { address: SOL })).toContain('address');
    expect(issuePaths(walletReadiness.input, { address: EVM, solanaAddress: EVM })).toContain('solanaAddress');
  });
});

describe('smm-order input', () => {
  it('requires link, quantity ≥ 1 and serviceId ≥ 1', () => {
    expect(issuePaths(smmOrder.input, { ...cases[9]!.valid, quantity: 0 })).toContain('quantity');
    expect(issuePaths(smmOrder.input, { ...cases[9]!.valid, quantity: 2.5 })).toContain('quantity');
    expect(issuePaths(smmOrder.input, { ...cases[9]!.valid, serviceId: 0 })).toContain('serviceId');
    expect(issuePaths(smmOrder.input, { ...cases[9]!.valid, link: '' })).toContain('link');
    expect(issuePaths(smmOrder.input, { ...cases[9]!.valid, link: 'x'.repeat(2049) })).toContain('link');
  });
});

describe('development-indicator query (GET)', () => {
  const s = developmentIndicator.input;
  it('applies the year defaults and normalises the country', () => {
    expect(s.parse({ country: 'bra', indicator: 'SP.POP.TOTL' })).toEqual({
      country: 'BRA',
      indicator: 'SP.POP.TOTL',
      startYear: 2018,
      endYear: 2023,
    });
  });
  it('coerces query-string years', () => {
    expect(s.parse({ country: 'BR', indicator: 'NY.GDP.MKTP.CD', startYear: '2000', endYear: '2010' })).toMatchObject({
      startYear: 2000,
      endYear: 2010,
    });
  });
  it('rejects bad values naming the field', () => {
    expect(issuePaths(s, { country: 'BRAZ', indicator: 'X' })).toContain('country');
    expect(issuePaths(s, { country: 'BR', indicator: 'NY GDP' })).toContain('indicator');
    expect(issuePaths(s, { country: 'BR', indicator: 'X'.repeat(65) })).toContain('indicator');
    expect(issuePaths(s, { country: 'BR', indicator: 'X', startYear: '1800' })).toContain('startYear');
    expect(issuePaths(s, { country: 'BR', indicator: 'X', endYear: 'soon' })).toContain('endYear');
    expect(issuePaths(s, { country: 'BR', indicator: 'X', startYear: '2020.5' })).toContain('startYear');
    expect(messagesAt(s, { country: 'BR', indicator: 'X', startYear: '2022', endYear: '2020' }, 'endYear')[0]).toMatch(
      /before startYear/,
    );
  });
});

describe('token-report query (GET)', () => {
  const s = tokenReport.input;
  it('defaults the chain to eth and accepts any of token, address or contract', () => {
    expect(s.parse({ token: EVM })).toEqual({ chain: 'eth', token: EVM });
    expect(s.parse({ contract: EVM, chain: 'BASE' })).toEqual({ chain: 'base', contract: EVM });
    expect(s.parse({ address: SOL, chain: 'solana' }).address).toBe(SOL);
  });
  it('requires a field naming the token', () => {
    expect(messagesAt(s, { wallet: EVM }, 'token')[0]).toMatch(/token, address or contract/);
  });
  it('rejects an identifier of the wrong shape for the chain', () => {
    expect(issuePaths(s, { token: SOL })).toContain('token');
    expect(issuePaths(s, { contract: EVM, chain: 'solana' })).toContain('contract');
  });
});

describe('transfers-evm query (GET)', () => {
  const s = transfersEvm.input;
  it('applies the defaults', () => {
    expect(s.parse({ address: EVM })).toEqual({ address: EVM, chain: 'base', limit: 100 });
  });
  it('coerces query-string numbers', () => {
    expect(s.parse({ address: EVM, limit: '50', fromBlock: '10', toBlock: '20' })).toMatchObject({
      limit: 50,
      fromBlock: 10,
      toBlock: 20,
    });
  });
  it('rejects bad values naming the field', () => {
    expect(issuePaths(s, { address: 'nope' })).toContain('address');
    expect(issuePaths(s, { address: EVM, token: 'USDC' })).toContain('token');
    expect(issuePaths(s, { address: EVM, chain: 'ethereum' })).toContain('chain');
    expect(issuePaths(s, { address: EVM, limit: '1001' })).toContain('limit');
    expect(issuePaths(s, { address: EVM, limit: '0' })).toContain('limit');
    expect(issuePaths(s, { address: EVM, fromBlock: '-1' })).toContain('fromBlock');
    expect(issuePaths(s, { address: EVM, fromBlock: '30', toBlock: '20' })).toContain('toBlock');
  });
});
