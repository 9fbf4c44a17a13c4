import { z } from 'zod';
import { optional, privateKey, SHARED_ENV, url } from '../shared/env.js';
import type { ServerSettingName } from '../shared/setting-groups.js';
import { driverUnavailable } from '../store/dialects/sqlite/driver.js';
import {
  algorandAddressProblem,
  evmAddressProblem,
  solanaAddressProblem,
  stellarAddressProblem,
} from '../payments/reading/address-format.js';

// The development placeholders live in the shared layer, so the paying agent can refuse them too.
export { DEV_FEE_PAYER, DEV_PAY_TO } from '../shared/dev-addresses.js';

/** An address setting checked by its family's rule (src/payments/reading/address-format.ts): checksum, length, zero address. */
const address = (problem: (value: string) => string | undefined) =>
  z.string().superRefine((value, ctx) => {
    const message = problem(value);
    if (message) ctx.addIssue({ code: 'custom', message });
  });
const evmAddress = address(evmAddressProblem);
const solanaAddress = address(solanaAddressProblem);
const stellarAddress = address(stellarAddressProblem);
const algorandAddress = address(algorandAddressProblem);

/**
 * Every environment variable the server reads, validated (`<NAME>_FILE` is resolved before). The agent side's own
 * settings (REMOTE_URL*, WALLET_*, BUDGET_*, PAYMENT_*) are read by its own schema (src/agent/settings.ts). The keys
 * are exactly the names of the grouped list (src/shared/setting-groups.ts), which `tollbooth config` prints by group.
 */
export const EnvSchema = z.object({
  NODE_ENV: optional(z.string()),
  PORT: optional(z.coerce.number({ error: 'must be a port number from 0 to 65535' }).int().min(0).max(65535)),
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
  SQLITE_DRIVER: optional(
    z.enum(['node:sqlite', 'libsql'], { error: 'must be node:sqlite or libsql' }).superRefine((driver, ctx) => {
      const problem = driverUnavailable(driver);
      if (problem) ctx.addIssue({ code: 'custom', message: `${problem}: unset it or use libsql` });
    }),
  ),
  FACILITATOR_URL: optional(url),
  FACILITATOR_TIMEOUT_MS: optional(z.coerce.number().int().positive()),
  FACILITATOR_SETTLE_TIMEOUT_MS: optional(z.coerce.number().int().positive()),
  STALE_CLAIM_SECONDS: optional(z.coerce.number().int().min(1).max(86_400)),
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
  /** Variables that look like ours but belong to something else: not reported at start-up (src/cli/env-check.ts). */
  TOLLBOOTH_FOREIGN_ENV: optional(z.string()),
  LOG_LEVEL: SHARED_ENV.LOG_LEVEL,
  MCP_ALLOWED_HOSTS: optional(z.string()),
  MCP_SESSION_IDLE_MS: optional(z.coerce.number().int().positive()),
  MCP_MAX_SESSIONS: optional(z.coerce.number().int().min(1).max(1_000_000)),
  MCP_MAX_SESSIONS_PER_CLIENT: optional(z.coerce.number().int().min(1).max(1_000_000)),
  SHUTDOWN_TIMEOUT_MS: optional(z.coerce.number().int().min(0).max(3_600_000)),
  WORKER_THREADS_PER_TOOL: optional(z.coerce.number().int().min(1).max(64)),
  WORKER_QUEUE_PER_TOOL: optional(z.coerce.number().int().min(0).max(10_000)),
  WORKER_JOB_TIMEOUT_MS: optional(z.coerce.number().int().min(100).max(600_000)),
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
  SMM_ORDER_CANONICAL_V2: optional(z.enum(['on', 'off'], { error: 'must be on or off' })),
  BATCH_SETTLEMENT: optional(z.enum(['on', 'off'], { error: 'must be on or off' })),
  BATCH_RECEIVER_AUTHORIZER_KEY: optional(privateKey),
  BATCH_WITHDRAW_DELAY: optional(z.coerce.number().int().min(900, 'must be at least 900 seconds (15 minutes)')),
  BATCH_CLAIM_INTERVAL: optional(z.coerce.number().int().min(10, 'must be at least 10 seconds')),
  BATCH_CLAIM_THRESHOLD: optional(z.string().regex(/^[0-9]{1,30}$/, 'must be token base units (digits)')),
  BATCH_REFUND_IDLE: optional(z.coerce.number().int().min(60, 'must be at least 60 seconds')),
  BATCH_RESERVATION_LEASE: optional(z.coerce.number().int().min(1, 'must be at least 1 second').max(600)),
  MPP_SECRET_KEY: optional(z.string()),
  MPP_REALM: optional(
    z
      .string()
      .regex(
        /^[A-Za-z0-9.:_~@!$&'()*+,;=%[\]-]{1,255}$/,
        'must be a host name (1-255 characters, no spaces or quotes)',
      ),
  ),
} satisfies Record<ServerSettingName, z.ZodType>);

/** The parsed environment. */
export type Env = z.output<typeof EnvSchema>;
