import { z } from 'zod';
import { NOT_YET_AVAILABLE_NOTE, notYetAvailable } from '../src/not-yet-available.js';
import { defineTool } from '../src/tool.js';

const DexTopPoolsInputSchema = z.object({
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
    .describe('Case-insensitive substring of the project slug, e.g. `uniswap` or `aerodrome`; omit for all projects.'),
});

const DexTopPoolsOutputSchema = z.object({
  source: z.string().describe('Name of the upstream data source.'),
  chain: z.string().describe('Chain filter applied, or `all`.'),
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

/** Largest liquidity pools by TVL, filterable by chain and project, with their APY. */
export const dexTopPools = defineTool({
  name: 'dex-top-pools',
  title: 'Top DEX liquidity pools',
  description:
    'Lists the largest DeFi liquidity pools ranked by total value locked, with chain, project, token symbols, ' +
    'TVL in USD and APY in percent. Filters: `chain` and `project` (case-insensitive; omit for all) and ' +
    '`limit` (1–50, default 10). Costs 1000 USDC units ($0.001) per call; $0.002 on Optimism; 10000 units ' +
    '($0.001) on Stellar.' + NOT_YET_AVAILABLE_NOTE,
  group: 'tools',
  method: 'POST',
  path: '/api/dex-top-pools',
  input: DexTopPoolsInputSchema,
  output: DexTopPoolsOutputSchema,
  price: { default: '1000', optimism: '2000', stellar: '10000' },
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: true },
  handler: notYetAvailable('dex-top-pools'),
});
