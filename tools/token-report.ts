import { z } from 'zod';
import { EvmAddressSchema, SolanaAddressSchema } from '../schemas/common.js';
import { defineTool, type ToolContext } from '../src/tool/tool.js';
import { findTokenChain, TOKEN_CHAIN_NAMES, tokenChain } from '../src/token-report/chains.js';
import { assessToken, RISK_FLAGS, type Assessment } from '../src/token-report/risk.js';
import { verdictOf } from '../src/token-report/verdict.js';

/** The report's schema version, advertised in every answer (docs/spec-notes.md#versioning). */
const SCHEMA_VERSION = '2.0.0' as const;

/** Query parameters that can name the token; they are synonyms and must agree. */
const TOKEN_FIELDS = ['token', 'address', 'contract'] as const;

const OptionalQueryText = () => z.string().trim().min(1).max(128).optional();

/** The report's query parameters, before the cross-field checks of {@link TokenReportInputSchema}. */
const TokenReportFields = () =>
  z.object({
    chain: z
      .string()
      .trim()
      .regex(/^[A-Za-z0-9-]{1,32}$/, 'must be a chain name such as eth, base, bsc, arbitrum, polygon or solana')
      .refine((v) => findTokenChain(v) !== undefined, {
        message: `is not a chain this report covers; use one of ${TOKEN_CHAIN_NAMES.join(', ')} (or a chain id such as 8453)`,
      })
      .transform((v) => tokenChain(v).name)
      .default('eth')
      .describe(
        `Chain of the token: ${TOKEN_CHAIN_NAMES.map((n) => `\`${n}\``).join(', ')} (default \`eth\`); any case, also ` +
          'aliases such as `ethereum`, `bnb`, `arb`, `matic`, `op`, `avax`, `sol` or the EVM chain id (`8453`).',
      ),
    token: OptionalQueryText().describe(
      'Token to report on: contract address (0x… on EVM chains) or mint (base58 on solana). ' +
        'One of `token`, `address` or `contract` is required; they are synonyms and must name the same token when several are given.',
    ),
    wallet: OptionalQueryText().describe(
      'Optional wallet address on the same chain: the report then says whether it owns, created or holds the token (`wallet` field).',
    ),
    address: OptionalQueryText().describe('Synonym of `token`: the token contract address or mint.'),
    contract: OptionalQueryText().describe('Synonym of `token`: the token contract address or mint.'),
  });

/** One token named (by any of its synonyms, all the same), each address valid on the chain. */
function checkTokenFields(input: z.output<ReturnType<typeof TokenReportFields>>, ctx: z.RefinementCtx): void {
  const given = TOKEN_FIELDS.filter((field) => typeof input[field] === 'string');
  if (given.length === 0) {
    ctx.addIssue({
      code: 'custom',
      path: ['token'],
      message:
        'Name the token to report on in one of the query parameters token, address or contract (at least one is required).',
    });
    return;
  }
  const chain = typeof input.chain === 'string' ? findTokenChain(input.chain) : undefined;
  if (!chain) return;
  const solana = chain.family === 'solana';
  const shape = solana ? SolanaAddressSchema : EvmAddressSchema;
  const same = (a: string, b: string) => (solana ? a === b : a.toLowerCase() === b.toLowerCase());
  for (const field of [...given, ...(input.wallet !== undefined ? (['wallet'] as const) : [])]) {
    if (!shape.safeParse(input[field]).success) {
      ctx.addIssue({
        code: 'custom',
        path: [field],
        message: solana
          ? `${field} must be a base58 Solana address when chain is ${input.chain}.`
          : `${field} must be a 0x-prefixed 40-hex-digit address on chain ${input.chain} (for a Solana mint, set chain=solana).`,
      });
    }
  }
  const first = given[0]!;
  for (const field of given.slice(1)) {
    if (!same(input[field]!, input[first]!)) {
      ctx.addIssue({
        code: 'custom',
        path: [field],
        message: `${field} names a different token than ${first}; they are synonyms, so give the token once (or the same address in both).`,
      });
    }
  }
}

const TokenReportInputSchema = () => TokenReportFields().superRefine(checkTokenFields);

const RiskFlagSchema = () =>
  z.enum(Object.keys(RISK_FLAGS) as [keyof typeof RISK_FLAGS, ...(keyof typeof RISK_FLAGS)[]]);

/** The report's identity and risk fields (a shape, built when the schema is). */
const reportRisk = () => ({
  schemaVersion: z.literal(SCHEMA_VERSION).describe('Version of this report format (2.0.0).'),
  chain: z.string().describe('Canonical chain name, e.g. `eth`, `base`, `solana`.'),
  token: z.string().describe('The token address the report is about, as given.'),
  name: z.string().describe('Token name ("" when no source knows it).'),
  symbol: z.string().describe('Token symbol ("" when no source knows it).'),
  verified: z
    .boolean()
    .describe(
      'EVM: the contract source is verified (open source). Solana: the mint is on the security source’s trusted list.',
    ),
  risk_flags: z
    .array(RiskFlagSchema())
    .describe(
      'Identifiers of the risks found, heaviest first, e.g. `mintable`, `hidden_owner`, `high_sell_tax`; empty when none.',
    ),
  risk_score: z
    .number()
    .min(0)
    .max(100)
    .describe(
      '0 (no risk found) to 100: 100 for a honeypot, else the sum of the flag weights (see docs/tools.md, Token report), capped at 100.',
    ),
  risk_level: z
    .enum(['low', 'medium', 'high', 'critical'])
    .describe('Score below 20 low, below 50 medium, below 80 high, else critical.'),
  is_honeypot: z
    .boolean()
    .describe('True when the token appears impossible to sell (Solana: non-transferable or frozen by default).'),
});

/** The report's market, ownership and wallet fields. */
const reportMarket = () => ({
  liquidity_usd: z
    .number()
    .describe('Sum of USD liquidity over the token’s DEX pairs on this chain (0 when it has none).'),
  pair_count: z.number().int().describe('Number of DEX pairs of the token on this chain.'),
  token_age_days: z
    .number()
    .nullable()
    .describe('Days since the token’s first DEX pair was created (1 decimal); null when no dated pair is indexed.'),
  ownership_renounced: z
    .boolean()
    .describe(
      'EVM: no owner (or the zero/dead address) and no way to reclaim it. Solana: no mint, freeze, close or balance authority.',
    ),
  top10_concentration_pct: z
    .number()
    .nullable()
    .describe(
      'Share of supply held by the 10 largest listed holders, percent 0–100; null when no holder list is available.',
    ),
  verdict: z
    .string()
    .describe(
      'Three-sentence analyst verdict generated from the data: risk and advice, contract findings, market and holders.',
    ),
  wallet: z
    .object({
      address: z.string(),
      is_owner: z.boolean().describe('The wallet is the owner (EVM) or a mint/freeze/balance authority (Solana).'),
      is_creator: z.boolean().describe('The wallet created the token.'),
      holding_pct: z
        .number()
        .nullable()
        .describe('Its share of supply when it is among the listed top holders, else null.'),
    })
    .optional()
    .describe('Present when `wallet` was given.'),
  sources: z.array(z.string()).describe('Upstream data sources.'),
});

const TokenReportOutputSchema = () => z.object({ ...reportRisk(), ...reportMarket() });

function walletView(wallet: string, a: Assessment, evm: boolean) {
  const same = (x: string) => (evm ? x.toLowerCase() === wallet.toLowerCase() : x === wallet);
  const held = a.holders.filter((h) => same(h.address)).reduce((sum, h) => sum + h.pct, 0);
  return {
    address: wallet,
    is_owner: a.owners.some(same),
    is_creator: a.creators.some(same),
    holding_pct: a.holders.some((h) => same(h.address)) ? Math.round(held * 100) / 100 : null,
  };
}

/** Reads the token's security record and its DEX pairs in parallel, then scores and words them. */
async function report(input: z.output<ReturnType<typeof TokenReportInputSchema>>, ctx: ToolContext) {
  const chain = tokenChain(input.chain);
  const field = TOKEN_FIELDS.find((f) => input[f] !== undefined)!;
  const address = input[field]!;
  const { goplus, dexscreener } = ctx.providers;
  const [security, pairs] = await Promise.all([
    goplus.tokenSecurity({ chain, address, field, signal: ctx.signal }),
    dexscreener.tokenPairs({ chain, address, signal: ctx.signal }),
  ]);
  const a = assessToken(security.data, pairs.data, Date.now());
  return {
    schemaVersion: SCHEMA_VERSION,
    chain: chain.name,
    token: address,
    name: a.name,
    symbol: a.symbol,
    verified: a.verified,
    risk_flags: a.flags,
    risk_score: a.score,
    risk_level: a.level,
    is_honeypot: a.isHoneypot,
    liquidity_usd: a.liquidityUsd,
    pair_count: a.pairCount,
    token_age_days: a.ageDays,
    ownership_renounced: a.ownershipRenounced,
    top10_concentration_pct: a.top10Pct,
    verdict: verdictOf(a, chain.label),
    ...(input.wallet !== undefined ? { wallet: walletView(input.wallet, a, chain.family === 'evm') } : {}),
    sources: [goplus.source, dexscreener.source],
  };
}

/** Due-diligence risk report for a token contract: honeypot, ownership, liquidity, holder concentration and a verdict. */
export const tokenReport = defineTool({
  name: 'token-report',
  title: 'Token due-diligence report',
  description:
    'Risk report (schema version 2.0.0) for one token before you buy or accept it: name, symbol, contract ' +
    'verification, honeypot check, ownership renounced, DEX liquidity in USD, token age in days, top-10 holder ' +
    'concentration, risk flags, a 0–100 risk score and a three-sentence analyst verdict (`verdict`). Query: `chain` ' +
    '(default eth; base, bsc, arbitrum, polygon, optimism, avalanche, solana) and the token address in `token`, ' +
    '`address` or `contract`; optional `wallet`. Unsupported chains, malformed addresses and unknown tokens are ' +
    'refused and not charged.',
  group: 'token',
  method: 'GET',
  path: '/report',
  input: TokenReportInputSchema,
  output: TokenReportOutputSchema,
  pricing: { usd: '0.15', accepts: 'base-and-solana' },
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: true },
  example: { chain: 'base', token: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913' },
  handler: report,
});
