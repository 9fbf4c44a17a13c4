import { z } from 'zod';
import { optional, privateKey, SHARED_ENV, url } from './shared/env.js';

/** Clearly labelled development pay-to addresses (32 bytes of 0xde), used only when none are configured. */
export const DEV_PAY_TO = {
  evm: '0x00000000000000000000000000000000DeaDBeef',
  svm: 'FzzcmrPGHCwHy6XfqKQybLLMCFhgX7R33axfwNwzrxbw',
  stellar: 'GDPN5XW633PN5XW633PN5XW633PN5XW633PN5XW633PN5XW633PN5MZU',
  algorand: '33PN5XW633PN5XW633PN5XW633PN5XW633PN5XW633PN5XW633PMWXSJFI',
} as const;

/** Development fee-payer / facilitator placeholders (32 bytes of 0xfe), replaced by real signers when configured. */
export const DEV_FEE_PAYER = {
  evm: '0x000000000000000000000000000000000000FeE5',
  svm: 'JAQ5MVHbCkSYRzXunsrNuM2m1LS859PGveHfoYPAmcvZ',
  algorand: '737P57X6737P57X6737P57X6737P57X6737P57X6737P57X6737JO4454Y',
} as const;

const evmAddress = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'must be a 0x-prefixed 20-byte hex address');
const solanaAddress = z.string().regex(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/, 'must be a base58 Solana address');
const stellarAddress = z.string().regex(/^G[A-Z2-7]{55}$/, 'must be a Stellar G… account id');
const algorandAddress = z.string().regex(/^[A-Z2-7]{58}$/, 'must be a 58-character Algorand address');

/**
 * Every environment variable the server reads, validated (`<NAME>_FILE` is resolved before). The agent side's own
 * settings (REMOTE_URL*, WALLET_*, BUDGET_*, PAYMENT_*) are read by its own schema (src/agent/settings.ts).
 */
export const EnvSchema = z.object({
  NODE_ENV: optional(z.string()),
  PORT: optional(z.coerce.number().int().min(0).max(65535)),
  HOST: optional(z.string()),
  BASE_URL_TOOLS: optional(url),
  BASE_URL_TOKEN: optional(url),
  BASE_URL_SMM: optional(url),
  BASE_URL_TRANSFERS: optional(url),
  PAY_TO_EVM: optional(evmAddress),
  PAY_TO_SOLANA: optional(solanaAddress),
  PAY_TO_STELLAR: optional(stellarAddress),
  PAY_TO_ALGORAND: optional(algorandAddress),
  DATA_DIR: SHARED_ENV.DATA_DIR,
  DATABASE_URL: SHARED_ENV.DATABASE_URL,
  FACILITATOR_URL: optional(url),
  FACILITATOR_TIMEOUT_MS: optional(z.coerce.number().int().positive()),
  FACILITATOR_SETTLE_TIMEOUT_MS: optional(z.coerce.number().int().positive()),
  FACILITATOR_URL_EVM: optional(url),
  FACILITATOR_URL_SOLANA: optional(url),
  FACILITATOR_URL_STELLAR: optional(url),
  FACILITATOR_URL_ALGORAND: optional(url),
  FACILITATOR_HEADERS: optional(z.string()),
  FACILITATOR_UNSUPPORTED: optional(z.enum(['drop', 'refuse'], { error: 'must be drop or refuse' })),
  FACILITATOR_EVM_PRIVATE_KEY: optional(privateKey),
  FACILITATOR_SOLANA_SECRET_KEY: optional(z.string()),
  FACILITATOR_STELLAR_SECRET: optional(z.string()),
  FACILITATOR_ALGORAND_MNEMONIC: optional(z.string()),
  FACILITATOR_EVM_ADDRESS: optional(evmAddress),
  SOLANA_FEE_PAYER: optional(solanaAddress),
  ALGORAND_FEE_PAYER: optional(algorandAddress),
  IDEMPOTENCY_TTL_SECONDS: optional(
    z.coerce
      .number()
      .int()
      .min(60)
      .max(30 * 86_400),
  ),
  BUILDER_CODE: optional(z.string().regex(/^[a-z0-9_]{1,32}$/, 'must match ^[a-z0-9_]{1,32}$')),
  NETWORKS_FILE: SHARED_ENV.NETWORKS_FILE,
  NETWORKS_JSON: SHARED_ENV.NETWORKS_JSON,
  TOLLBOOTH_NETWORK_SET: SHARED_ENV.TOLLBOOTH_NETWORK_SET,
  LOG_LEVEL: SHARED_ENV.LOG_LEVEL,
  MCP_ALLOWED_HOSTS: optional(z.string()),
  MCP_SESSION_IDLE_MS: optional(z.coerce.number().int().positive()),
  SHUTDOWN_TIMEOUT_MS: optional(z.coerce.number().int().min(0).max(3_600_000)),
  METRICS_TOKEN: optional(z.string().min(16, 'must be at least 16 characters')),
  HYPERLIQUID_API_URL: optional(url),
  DEFILLAMA_STABLECOINS_URL: optional(url),
  DEFILLAMA_YIELDS_URL: optional(url),
  WORLDBANK_API_URL: optional(url),
  KALSHI_API_URL: optional(url),
  GOPLUS_API_URL: optional(url),
  DEXSCREENER_API_URL: optional(url),
  SMM_PANEL_URL: optional(url),
  SMM_PANEL_KEY: optional(z.string().min(1)),
  UPSTREAM_TIMEOUT_MS: optional(z.coerce.number().int().positive()),
  UPSTREAM_RETRIES: optional(z.coerce.number().int().min(0).max(10)),
  RPC_URLS: optional(z.string()),
  CDP_API_URL: optional(url),
  CDP_API_KEY_ID: optional(z.string().min(1)),
  CDP_API_KEY_SECRET: optional(z.string().min(1)),
  FAUCET_PROVIDER: optional(z.enum(['cdp', 'self-hosted'])),
  FAUCET_EVM_PRIVATE_KEY: optional(privateKey),
  FAUCET_SOLANA_SECRET_KEY: optional(z.string()),
  FAUCET_SOLANA_USDC_MINT: optional(solanaAddress),
  WALLET_READINESS_NETWORKS: optional(z.string()),
  WALLET_STEP_TIMEOUT_MS: optional(z.coerce.number().int().positive()),
  TRANSFERS_CHUNK_BLOCKS: optional(z.coerce.number().int().min(1).max(100_000)),
  TRANSFERS_MAX_BLOCKS: optional(z.coerce.number().int().min(1).max(10_000_000)),
  INDEXER_URL: optional(url),
  ALCHEMY_API_KEY: optional(z.string().min(1)),
  TRUST_PROXY: optional(z.string()),
  RATE_LIMIT_IP_PER_MINUTE: optional(z.coerce.number().min(0)),
  RATE_LIMIT_IP_BURST: optional(z.coerce.number().int().min(1)),
  RATE_LIMIT_PAYER_PER_MINUTE: optional(z.coerce.number().min(0)),
  RATE_LIMIT_PAYER_BURST: optional(z.coerce.number().int().min(1)),
  RATE_LIMIT_TOOL_PER_MINUTE: optional(z.coerce.number().min(0)),
  RATE_LIMIT_TOOL_BURST: optional(z.coerce.number().int().min(1)),
  RATE_LIMIT_TOOLS: optional(z.string()),
  RATE_LIMIT_SHARED: optional(z.enum(['true', 'false'])),
  MPP: optional(z.enum(['on', 'off'], { error: 'must be on or off' })),
  MPP_SECRET_KEY: optional(z.string()),
  MPP_REALM: optional(
    z
      .string()
      .regex(
        /^[A-Za-z0-9.:_~@!$&'()*+,;=%[\]-]{1,255}$/,
        'must be a host name (1-255 characters, no spaces or quotes)',
      ),
  ),
});

/** The parsed environment. */
export type Env = z.output<typeof EnvSchema>;
