import { z } from 'zod';
import { ToolError } from '../src/shared/errors.js';
import type { LiquidityPool } from '../src/providers/market/defillama-yields.js';
import { defineTool, type ToolContext } from '../src/tool/tool.js';

const DexTopPoolsInputSchema = () =>
  z.object({
    chain: z
      .string()
      .trim()
      .min(1)
      .max(64)
      .optional()
      .describe('Chain name, case-insensitive, e.g. Ethereum, Base, Arbitrum, Solana; omit for all chains.'),
    limit: z.number().int().min(1).max(50).default(10).describe('Pools returned; integer 1–50, default 10.'),
    project: z
      .string()
      .trim()
      .min(1)
      .max(64)
      .optional()
      .describe(
        'Case-insensitive substring of the project slug, e.g. `uniswap` or `aerodrome`; omit for all projects.',
      ),
  });

const DexTopPoolsOutputSchema = () =>
  z.object({
    source: z.string().describe('Name of the upstream data source.'),
    chain: z.string().describe('Chain filter applied (as the source spells it), or `all`.'),
    project: z.string().describe('Project filter applied, or `all`.'),
    count: z.number().int().describe('Number of entries in `pools`.'),
    pools: z
      .array(
        z.object({
          pool: z.string().describe('Source identifier of the pool.'),
          chain: z.string(),
          project: z.string().describe('Project slug, e.g. `uniswap-v3`.'),
          symbol: z.string().describe('Pool token symbols, e.g. `USDC-WETH`.'),
          tvlUsd: z.number().int().describe('Total value locked, whole USD.'),
          apy: z.number().describe('Current total APY in percent (base plus rewards).'),
        }),
      )
      .describe('Pools ranked by TVL, largest first.'),
  });

type DexTopPoolsInput = z.output<ReturnType<typeof DexTopPoolsInputSchema>>;

/**
 * Walks the cached list, already ranked by TVL, and stops at `limit` matches: a call costs string comparisons only,
 * never a sort or an upstream request (the list is fetched once per cache period).
 */
async function topPools(input: DexTopPoolsInput, ctx: ToolContext) {
  const provider = ctx.providers.yields;
  const { data: ranking } = await provider.pools(ctx.signal);
  let chain: string | undefined;
  if (input.chain !== undefined) {
    chain = ranking.chainLabels.get(input.chain.toLowerCase());
    if (chain === undefined) {
      throw new ToolError(
        'not_found',
        `The ${provider.source} lists no liquidity pool on a chain named "${input.chain}". Chain names are like ${ranking.chainsByTvl.slice(0, 8).join(', ')}.`,
        { field: 'chain' },
      );
    }
  }
  const chainKey = chain?.toLowerCase();
  const project = input.project?.toLowerCase();
  const pools: LiquidityPool[] = [];
  for (const p of ranking.pools) {
    if (chainKey !== undefined && p.chainKey !== chainKey) continue;
    if (project !== undefined && !p.projectKey.includes(project)) continue;
    pools.push(p.row);
    if (pools.length === input.limit) break;
  }
  if (pools.length === 0) {
    const largest = new Set<string>();
    for (const p of ranking.pools) {
      if (chainKey === undefined || p.chainKey === chainKey) largest.add(p.row.project);
      if (largest.size === 6) break;
    }
    throw new ToolError(
      'not_found',
      `No liquidity pool of a project matching "${input.project}"${chain ? ` on ${chain}` : ''}. The largest projects${chain ? ` there` : ''} are ${[...largest].join(', ')}.`,
      { field: 'project' },
    );
  }
  return {
    source: provider.source,
    chain: chain ?? 'all',
    project: input.project ?? 'all',
    count: pools.length,
    pools,
  };
}

/** Largest liquidity pools by TVL, filterable by chain and project, with their APY. */
export const dexTopPools = defineTool({
  name: 'dex-top-pools',
  title: 'Top DEX liquidity pools',
  description:
    'Lists the largest DEX liquidity pools (pools of two or more tokens) ranked by total value locked, with chain, ' +
    'project, token symbols, TVL in USD and APY in percent. Filters: `chain` (exact name, case-insensitive) and ' +
    '`project` (case-insensitive substring of the slug), omit either for all; `limit` (1–50, default 10). An unknown ' +
    'chain or a filter that matches nothing is answered 404 and not charged.',
  group: 'tools',
  method: 'POST',
  path: '/api/dex-top-pools',
  input: DexTopPoolsInputSchema,
  output: DexTopPoolsOutputSchema,
  pricing: { usd: '0.001', accepts: 'every-network' },
  example: { chain: 'Ethereum', limit: 10 },
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: true },
  handler: topPools,
});
