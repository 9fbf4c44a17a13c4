import { z } from 'zod';
import type { TokenChain } from '../../token-report/chains.js';
import type { Fetched, Upstream } from '../upstream.js';

/**
 * DexScreener token pairs (docs/spec-notes.md#dexscreener-token-api): `GET /latest/dex/tokens/{address}` lists up to 30
 * pairs on any chain. An unknown or unindexed token is HTTP 200 `{"pairs": null}` (not indexed, not "zero liquidity");
 * `liquidity` and `priceUsd` may be missing; `pairCreatedAt` is epoch milliseconds.
 */

const num = z
  .union([z.string(), z.number(), z.null()])
  .optional()
  .transform((v) => {
    if (v === null || v === undefined || (typeof v === 'string' && v.trim() === '')) return undefined;
    const n = Number(v);
    return Number.isFinite(n) ? n : undefined;
  });

const TokenRefSchema = z.object({ address: z.string(), name: z.string().nullish(), symbol: z.string().nullish() });

const PairSchema = z.object({
  chainId: z.string(),
  dexId: z.string().nullish(),
  pairAddress: z.string(),
  baseToken: TokenRefSchema,
  quoteToken: TokenRefSchema,
  priceUsd: num,
  liquidity: z.object({ usd: num }).nullish(),
  volume: z.object({ h24: num }).nullish(),
  pairCreatedAt: num,
});

const TokensAnswerSchema = z.object({
  schemaVersion: z.string().optional(),
  pairs: z.array(PairSchema).nullable(),
});

/** One DEX pair of the token on the requested chain. */
export interface DexPair {
  dex: string;
  pairAddress: string;
  /** The token's own name and symbol as the pair lists them. */
  tokenName: string | undefined;
  tokenSymbol: string | undefined;
  /** Symbol of the other side of the pair. */
  quoteSymbol: string | undefined;
  /** Pool liquidity in USD; undefined when DexScreener has no figure. */
  liquidityUsd: number | undefined;
  volume24hUsd: number | undefined;
  /** When the pair was created, epoch ms; undefined when unknown. */
  createdAt: number | undefined;
}

/** One token-pairs lookup. */
export interface TokenPairsQuery {
  chain: TokenChain;
  address: string;
  signal?: AbortSignal;
}

/** DEX pairs (liquidity, age) of tokens from the DexScreener API. */
export interface DexScreenerProvider {
  /** The upstream's label, for `sources` fields. */
  readonly source: string;
  /** The token's pairs on the requested chain (the token as base or quote); empty when DexScreener indexes none. */
  tokenPairs(query: TokenPairsQuery): Promise<Fetched<DexPair[]>>;
}

/** Builds the DexScreener provider over its upstream client. */
export function createDexScreenerProvider(upstream: Upstream): DexScreenerProvider {
  async function tokenPairs(q: TokenPairsQuery): Promise<Fetched<DexPair[]>> {
    const fetched = await upstream.request({
      path: `/latest/dex/tokens/${encodeURIComponent(q.address)}`,
      schema: TokensAnswerSchema,
      signal: q.signal,
    });
    // EVM addresses compare in any case; Solana mints are case-sensitive base58.
    const same =
      q.chain.family === 'evm'
        ? (a: string) => a.toLowerCase() === q.address.toLowerCase()
        : (a: string) => a === q.address;
    const pairs: DexPair[] = [];
    for (const p of fetched.data.pairs ?? []) {
      if (p.chainId !== q.chain.dexscreener) continue;
      const own = same(p.baseToken.address) ? p.baseToken : same(p.quoteToken.address) ? p.quoteToken : undefined;
      if (!own) continue;
      const other = own === p.baseToken ? p.quoteToken : p.baseToken;
      pairs.push({
        dex: p.dexId ?? 'unknown',
        pairAddress: p.pairAddress,
        tokenName: own.name ?? undefined,
        tokenSymbol: own.symbol ?? undefined,
        quoteSymbol: other.symbol ?? undefined,
        liquidityUsd: p.liquidity?.usd,
        volume24hUsd: p.volume?.h24,
        createdAt: p.pairCreatedAt,
      });
    }
    return { ...fetched, data: pairs };
  }

  return { source: upstream.info.label, tokenPairs };
}
