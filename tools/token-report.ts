import { z } from 'zod';
import { EvmAddressSchema, SolanaAddressSchema } from '../schemas/common.js';
import { NOT_YET_AVAILABLE_NOTE, notYetAvailable } from '../src/not-yet-available.js';
import { defineTool } from '../src/tool.js';

/** Chain names under which token identifiers are Solana mints rather than EVM contracts. */
const SOLANA_CHAINS = new Set(['solana', 'sol']);

/** Query parameters that can name the token, in order of precedence. */
const TOKEN_FIELDS = ['contract', 'address', 'token'] as const;

const OptionalQueryText = z.string().trim().min(1).max(128).optional();

const TokenReportInputSchema = z
  .object({
    chain: z
      .string()
      .trim()
      .regex(/^[A-Za-z0-9-]{1,32}$/, 'must be a chain name such as eth, base, bsc, arbitrum, polygon or solana')
      .toLowerCase()
      .default('eth')
      .describe(
        'Chain of the token: `eth` (default), `base`, `bsc`, `arbitrum`, `polygon`, `optimism`, `avalanche` or ' +
          '`solana`; any case, lower-cased.',
      ),
    token: OptionalQueryText.describe(
      'Token to report on: contract address (0x… on EVM chains) or mint (base58 on solana). ' +
        'One of `token`, `address` or `contract` is required; they are synonyms (precedence: contract, address, token).',
    ),
    wallet: OptionalQueryText.describe(
      'Optional wallet address (yours or one you are assessing) for context; it never names the token.',
    ),
    address: OptionalQueryText.describe('Synonym of `token`: the token contract address or mint.'),
    contract: OptionalQueryText.describe('Synonym of `token`: the token contract address or mint.'),
  })
  .superRefine((input, ctx) => {
    const given = TOKEN_FIELDS.filter((field) => typeof input[field] === 'string');
    if (given.length === 0) {
      ctx.addIssue({
        code: 'custom',
        path: ['token'],
        message: 'Name the token to report on in one of the query parameters token, address or contract (at least one is required).',
      });
      return;
    }
    if (typeof input.chain !== 'string') return;
    const solana = SOLANA_CHAINS.has(input.chain);
    const shape = solana ? SolanaAddressSchema : EvmAddressSchema;
    for (const field of given) {
      if (!shape.safeParse(input[field]).success) {
        ctx.addIssue({
          code: 'custom',
          path: [field],
          message: solana
            ? `${field} must be a base58 Solana mint address when chain is ${input.chain}.`
            : `${field} must be a 0x-prefixed 40-hex-digit contract address on chain ${input.chain} (for a Solana mint, set chain=solana).`,
        });
      }
    }
  });

const TokenReportOutputSchema = z.object({
  name: z.string().describe('Token name.'),
  symbol: z.string().describe('Token symbol.'),
  verified: z.boolean().describe('True when the contract source is verified/open source.'),
  risk_flags: z
    .array(z.string())
    .describe('Short identifiers of the risks found, e.g. `mintable`, `hidden_owner`, `high_sell_tax`; empty when none.'),
  risk_score: z.number().describe('Overall risk score from 0 (no risk found) to 100 (highest risk).'),
  is_honeypot: z.boolean().describe('True when the token appears impossible to sell.'),
  liquidity_usd: z.number().describe('DEX liquidity across the token’s pairs, in USD (0 when not traded).'),
  token_age_days: z.number().describe('Days since the token’s first DEX pair was created.'),
  ownership_renounced: z.boolean().describe('True when the contract has no owner able to change it.'),
  top10_concentration_pct: z.number().describe('Share of supply held by the 10 largest holders, in percent (0–100).'),
  verdict: z.string().describe('Three-sentence analyst verdict summarising the risks and what they mean for a buyer.'),
});

/** Due-diligence risk report for a token contract: honeypot, ownership, liquidity, holder concentration and a verdict. */
export const tokenReport = defineTool({
  name: 'token-report',
  title: 'Token due-diligence report',
  description:
    'Risk report for one token before you buy or accept it: name, symbol, contract verification, honeypot ' +
    'check, ownership renounced, DEX liquidity in USD, token age in days, top-10 holder concentration, a list ' +
    'of risk flags, a 0–100 risk score and a three-sentence analyst verdict. Query: `chain` (default eth; ' +
    'solana for mints) and the token address in `token`, `address` or `contract`. Costs 150000 USDC units ' +
    '($0.15) per call, payable on Base (eip155:8453) or Solana only.' + NOT_YET_AVAILABLE_NOTE,
  group: 'token',
  method: 'GET',
  path: '/report',
  input: TokenReportInputSchema,
  output: TokenReportOutputSchema,
  price: { default: '150000' },
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: true },
  handler: notYetAvailable('token-report'),
});
