import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDexScreenerProvider } from '../../../src/providers/market/dexscreener.js';
import { tokenChain } from '../../../src/token-report/chains.js';
import { startDexScreenerLookalike } from '../../support/upstreams/dexscreener.js';
import { TOKENS } from '../../support/upstreams/goplus.js';
import { toolFailure, upstreamFor } from '../../support/upstreams/open-data.js';
import type { Lookalike } from '../../support/upstreams/server.js';

const NOW = Date.UTC(2026, 4, 1);
let lookalike: Lookalike;
beforeAll(async () => {
  lookalike = await startDexScreenerLookalike({ now: () => NOW });
});
afterAll(async () => {
  await lookalike?.stop();
});

const fresh = () => createDexScreenerProvider(upstreamFor('dexscreener', lookalike.url, { timeoutMs: 250 }));

describe('the DexScreener provider', () => {
  it('keeps the pairs on the requested chain in which the token is base or quote, in any address case', async () => {
    const provider = fresh();
    expect(provider.source).toBe('DexScreener API');
    const { data } = await provider.tokenPairs({ chain: tokenChain('base'), address: TOKENS.clean.toLowerCase() });
    expect(data.map((p) => p.dex)).toEqual(['uniswap', 'aerodrome', 'baseswap']);
    expect(data[0]).toMatchObject({
      tokenName: 'Example',
      tokenSymbol: 'EXM',
      quoteSymbol: 'WETH',
      liquidityUsd: 185000.12,
      createdAt: NOW - 400 * 86_400_000,
    });
    expect(data[1]).toMatchObject({ tokenSymbol: 'EXM', quoteSymbol: 'USDC', liquidityUsd: 42000.5 });
    expect(data[2]).toMatchObject({ liquidityUsd: undefined, createdAt: undefined });
    const eth = await provider.tokenPairs({ chain: tokenChain('eth'), address: TOKENS.clean });
    expect(eth.data.map((p) => p.liquidityUsd)).toEqual([999999]);
  });

  it('matches Solana mints exactly', async () => {
    const { data } = await fresh().tokenPairs({ chain: tokenChain('solana'), address: TOKENS.solClean });
    expect(data.map((p) => p.liquidityUsd)).toEqual([1200000, 300000]);
  });

  it('reads an unindexed token (HTTP 200 with pairs: null) as no pairs, not as an error', async () => {
    const { data } = await fresh().tokenPairs({ chain: tokenChain('base'), address: TOKENS.untraded });
    expect(data).toEqual([]);
  });

  it('refuses pairs of the wrong shape, and maps timeouts and rate limits', async () => {
    lookalike.failNext('mismatch');
    expect((await toolFailure(fresh().tokenPairs({ chain: tokenChain('base'), address: TOKENS.clean }))).code).toBe(
      'upstream_invalid',
    );
    lookalike.failNext('429', 2);
    expect((await toolFailure(fresh().tokenPairs({ chain: tokenChain('base'), address: TOKENS.clean }))).code).toBe(
      'upstream_rate_limited',
    );
    lookalike.failNext('reset', 2);
    expect((await toolFailure(fresh().tokenPairs({ chain: tokenChain('base'), address: TOKENS.clean }))).code).toBe(
      'upstream_unavailable',
    );
  });
});
