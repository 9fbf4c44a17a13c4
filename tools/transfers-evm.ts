import { z } from 'zod';
import { EvmAddressSchema, IsoTimestampSchema } from '../schemas/common.js';
import { defineTool } from '../src/tool/tool.js';

/** Chains served; Base only for now (the payment challenge is Base-only too). */
const CHAINS = ['base'] as const;

/** Optional block number from the query string (coerced from text). */
const QueryBlockSchema = () => z.coerce.number().int().nonnegative().optional();

const TransfersEvmInputSchema = () =>
  z
    .object({
      address: EvmAddressSchema.describe('Wallet address whose ERC-20 transfers (in and out) are listed.'),
      token: EvmAddressSchema.optional().describe(
        'Only transfers of this ERC-20 contract, e.g. USDC on Base 0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913; omit for all tokens.',
      ),
      chain: z.enum(CHAINS).default('base').describe('Chain to read; only `base` (the default) is served for now.'),
      fromBlock: QueryBlockSchema().describe(
        'First block to search (non-negative integer); omit to search as far back as one call reaches (the whole history with an indexer, ' +
          'otherwise the newest 50,000 blocks by default). The answer says how far it got: see `fromBlock` in the response.',
      ),
      toBlock: QueryBlockSchema().describe(
        'Last block to search (non-negative integer); omit for the latest block (a later block is clamped to it).',
      ),
      limit: z.coerce
        .number()
        .int()
        .min(1)
        .max(1000)
        .default(100)
        .describe('Most transfers returned, newest first; integer 1–1000, default 100.'),
    })
    .superRefine((input, ctx) => {
      const { fromBlock, toBlock } = input;
      if (typeof fromBlock === 'number' && typeof toBlock === 'number' && fromBlock > toBlock) {
        ctx.addIssue({
          code: 'custom',
          path: ['toBlock'],
          message: `toBlock (${toBlock}) must not be below fromBlock (${fromBlock}).`,
        });
      }
    });

const TransferSchema = () =>
  z.object({
    hash: z.string().describe('Transaction hash.'),
    blockNumber: z.number().int(),
    timestamp: IsoTimestampSchema.describe('Block time (ISO-8601).'),
    from: z.string().describe('Sender address.'),
    to: z.string().describe('Recipient address.'),
    token: z.string().describe('ERC-20 contract address.'),
    symbol: z.string().nullable().describe('Token symbol, or null when the contract does not report one.'),
    decimals: z.number().int().nullable().describe('Token decimals, or null when unknown.'),
    value: z.string().describe('Amount in the token’s smallest units (decimal integer string, exact).'),
    formatted: z
      .string()
      .nullable()
      .describe('Amount divided by 10^decimals as a decimal string, e.g. "1.5"; null when decimals are unknown.'),
    direction: z.enum(['in', 'out', 'self']).describe('Relative to `address`: received, sent, or sent to itself.'),
  });

const TransfersEvmOutputSchema = () =>
  z.object({
    address: z.string().describe('The wallet address queried.'),
    chain: z.enum(CHAINS),
    fromBlock: z
      .number()
      .int()
      .describe(
        'Lowest block this answer covers completely: every transfer in [fromBlock, toBlock] is listed. It is above the requested ' +
          'fromBlock when `limit` or the scan budget stopped the search; call again with toBlock = fromBlock - 1 for older transfers.',
      ),
    toBlock: z.number().int().describe('Highest block searched (the requested toBlock, or the latest block).'),
    count: z.number().int().describe('Number of transfers returned (at most `limit`).'),
    transfers: z.array(TransferSchema()).describe('ERC-20 transfers, newest first.'),
  });

/** ERC-20 transfers to and from a wallet on Base, newest first, with exact raw and formatted amounts. */
export const transfersEvm = defineTool({
  name: 'transfers-evm',
  title: 'EVM token transfers',
  description:
    'Lists ERC-20 token transfers into and out of a wallet on Base, newest first: transaction hash, block, ' +
    'time, counterparties, token contract and symbol, exact raw amount and a formatted amount, and direction ' +
    '(in/out/self). Query: `address` (required), `token` contract filter, `fromBlock`/`toBlock` range, ' +
    '`limit` (1–1000, default 100). The answer covers [fromBlock, toBlock] of the response completely; page back with ' +
    'toBlock = fromBlock - 1.',
  group: 'transfers',
  method: 'GET',
  path: '/api/transfers/evm',
  input: TransfersEvmInputSchema,
  output: TransfersEvmOutputSchema,
  pricing: { usd: '0.001', accepts: 'base-v1' },
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: true },
  handler: async ({ address, token, chain, fromBlock, toBlock, limit }, ctx) => {
    const page = await ctx.providers.transfers.list(chain, { address, token, fromBlock, toBlock, limit }, ctx.signal);
    const { getAddress } = await import('viem'); // loaded with the first call, not at start-up
    return {
      address: getAddress(address.toLowerCase()),
      chain,
      fromBlock: page.fromBlock,
      toBlock: page.toBlock,
      count: page.transfers.length,
      transfers: page.transfers,
    };
  },
});
