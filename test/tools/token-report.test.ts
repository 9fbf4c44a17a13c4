import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createDexScreenerProvider } from '../../src/providers/market/dexscreener.js';
import { createGoPlusProvider } from '../../src/providers/market/goplus.js';
import type { Providers } from '../../src/providers/index.js';
import { tokenReport } from '../../tools/token-report.js';
import { testContext } from '../support/context.js';
import { startDexScreenerLookalike } from '../support/upstreams/dexscreener.js';
import { OWNERS, startGoPlusLookalike, TOKENS, type GoPlusLookalike } from '../support/upstreams/goplus.js';
import { toolFailure, upstreamFor } from '../support/upstreams/open-data.js';
import type { Lookalike } from '../support/upstreams/server.js';

let goplus: GoPlusLookalike;
let dex: Lookalike;
beforeAll(async () => {
  [goplus, dex] = await Promise.all([startGoPlusLookalike(), startDexScreenerLookalike()]);
});
afterAll(async () => {
  await Promise.all([goplus?.stop(), dex?.stop()]);
});

function ctx() {
  const providers = {
    goplus: createGoPlusProvider(upstreamFor('goplus', goplus.url)),
    dexscreener: createDexScreenerProvider(upstreamFor('dexscreener', dex.url)),
  } as Partial<Providers> as Providers;
  return testContext({ providers });
}

async function run(query: Record<string, string>) {
  const raw = await tokenReport.handler(tokenReport.input.parse(query), ctx());
  return tokenReport.output.parse(raw);
}

const sentences = (text: string) => text.split(/(?<=\.)\s+/);

describe('token-report', () => {
  it('reports a clean Base token from both sources, with the three-sentence verdict and schema version 2.0.0', async () => {
    const out = await run({ chain: 'base', token: TOKENS.clean });
    expect(out).toEqual({
      schemaVersion: '2.0.0',
      chain: 'base',
      token: TOKENS.clean,
      name: 'Example',
      symbol: 'EXM',
      verified: true,
      risk_flags: [],
      risk_score: 0,
      risk_level: 'low',
      is_honeypot: false,
      liquidity_usd: 227000.62,
      pair_count: 3,
      token_age_days: 400,
      ownership_renounced: true,
      top10_concentration_pct: 39.5,
      verdict: expect.any(String),
      sources: ['GoPlus token security API', 'DexScreener API'],
    });
    expect(sentences(out.verdict)).toHaveLength(3);
    expect(out.verdict).toMatch(/^Example \(EXM\) on Base scores 0\/100, a low risk/);
  });

  it('reports a honeypot with score 100 and its flags', async () => {
    const out = await run({ chain: 'base', address: TOKENS.honeypot });
    expect(out).toMatchObject({
      is_honeypot: true,
      risk_score: 100,
      risk_level: 'critical',
      verified: false,
      ownership_renounced: false,
      liquidity_usd: 3500,
      token_age_days: 2,
      top10_concentration_pct: 81,
    });
    expect(out.risk_flags).toEqual([
      'honeypot',
      'cannot_sell_all',
      'hidden_owner',
      'not_open_source',
      'high_sell_tax',
      'low_liquidity',
      'high_holder_concentration',
      'new_token',
    ]);
    expect(sentences(out.verdict)[1]).toMatch(/honeypot/);
  });

  it('scores a mintable proxy on Ethereum by the flag weights (high risk)', async () => {
    const out = await run({ contract: TOKENS.risky });
    expect(out).toMatchObject({
      chain: 'eth',
      risk_score: 65,
      risk_level: 'high',
      ownership_renounced: false,
      top10_concentration_pct: 65,
      liquidity_usd: 50000,
      pair_count: 1,
      token_age_days: 30,
    });
    expect(out.risk_flags).toEqual(['high_sell_tax', 'mintable', 'high_holder_concentration', 'proxy']);
  });

  it('reports a token on no DEX with zero liquidity and unknown age and concentration', async () => {
    const out = await run({ chain: '8453', token: TOKENS.untraded });
    expect(out).toMatchObject({
      name: 'Quiet Token',
      liquidity_usd: 0,
      pair_count: 0,
      token_age_days: null,
      top10_concentration_pct: null,
      risk_flags: ['no_dex_pairs'],
      risk_score: 20,
      ownership_renounced: true,
    });
  });

  it('reports Solana mints from the Solana security route', async () => {
    const clean = await run({ chain: 'SOL', token: TOKENS.solClean });
    expect(clean).toMatchObject({
      chain: 'solana',
      name: 'Bonkish',
      symbol: 'BONKS',
      verified: true,
      ownership_renounced: true,
      risk_flags: ['metadata_mutable'],
      risk_score: 5,
      liquidity_usd: 1500000,
      pair_count: 2,
      token_age_days: 500,
    });
    const risky = await run({ chain: 'solana', token: TOKENS.solRisky, wallet: OWNERS.solRiskyAuthority });
    expect(risky).toMatchObject({
      risk_flags: ['freezable', 'mintable', 'transfer_fee', 'high_holder_concentration', 'new_token'],
      risk_score: 80,
      risk_level: 'critical',
      verified: false,
    });
    expect(risky.wallet).toEqual({
      address: OWNERS.solRiskyAuthority,
      is_owner: true,
      is_creator: true,
      holding_pct: null,
    });
  });

  it('says whether the given wallet owns, created or holds the token', async () => {
    const out = await run({
      chain: 'eth',
      token: TOKENS.risky,
      wallet: OWNERS.risky.toUpperCase().replace('0X', '0x'),
    });
    expect(out.wallet).toMatchObject({ is_owner: true, is_creator: false, holding_pct: 35 });
    const stranger = await run({ chain: 'eth', token: TOKENS.risky, wallet: TOKENS.wallet });
    expect(stranger.wallet).toEqual({ address: TOKENS.wallet, is_owner: false, is_creator: false, holding_pct: null });
  });

  it('answers tokens the security source does not know, and wallets given as the token, with not_found naming the field', async () => {
    expect(await toolFailure(run({ chain: 'base', address: TOKENS.unknown }))).toMatchObject({
      code: 'not_found',
      field: 'address',
    });
    expect(await toolFailure(run({ chain: 'base', token: TOKENS.wallet }))).toMatchObject({
      code: 'not_found',
      field: 'token',
    });
  });
});

describe('token-report query', () => {
  const issues = (query: Record<string, unknown>) => {
    const parsed = tokenReport.input.safeParse(query);
    expect(parsed.success).toBe(false);
    return (parsed.error as z.ZodError).issues.map((i) => ({ field: i.path.join('.'), message: i.message }));
  };

  it('accepts chain aliases and ids and canonicalises them', () => {
    for (const [chain, name] of [
      ['ethereum', 'eth'],
      ['1', 'eth'],
      ['BNB', 'bsc'],
      ['arb', 'arbitrum'],
      ['matic', 'polygon'],
      ['OP', 'optimism'],
      ['avax', 'avalanche'],
      ['8453', 'base'],
    ]) {
      expect(tokenReport.input.parse({ chain, token: TOKENS.clean }).chain).toBe(name);
    }
  });

  it('refuses a chain it does not cover, naming chain and listing the supported ones', () => {
    const [issue] = issues({ chain: 'fantom', token: TOKENS.clean });
    expect(issue).toMatchObject({ field: 'chain' });
    expect(issue!.message).toMatch(/eth, base, bsc, arbitrum, polygon, optimism, avalanche, solana/);
  });

  it('accepts the same token under several aliases (any case on EVM) and refuses different ones, naming the field', () => {
    expect(tokenReport.input.safeParse({ token: TOKENS.clean, contract: TOKENS.clean.toLowerCase() }).success).toBe(
      true,
    );
    const [issue] = issues({ token: TOKENS.clean, address: TOKENS.risky });
    expect(issue).toMatchObject({ field: 'address' });
    expect(issue!.message).toMatch(/different token than token/);
    expect(
      issues({ chain: 'solana', token: TOKENS.solClean, contract: TOKENS.solClean.toLowerCase() }).map((i) => i.field),
    ).toContain('contract');
  });

  it('refuses a wallet of the wrong shape for the chain, naming wallet', () => {
    expect(issues({ token: TOKENS.clean, wallet: TOKENS.solClean }).map((i) => i.field)).toEqual(['wallet']);
    expect(issues({ chain: 'solana', token: TOKENS.solClean, wallet: TOKENS.clean }).map((i) => i.field)).toEqual([
      'wallet',
    ]);
  });

  it('advertises an example that parses', () => {
    expect(tokenReport.input.safeParse(tokenReport.example).success).toBe(true);
  });
});
