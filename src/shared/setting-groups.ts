/**
 * The one grouped list of every environment variable Tollbooth reads, server and agent side: which group each belongs
 * to (server, payments per network family, facilitators, store, limits, upstreams, the chain tools, the agent), its
 * default as an operator reads it, and whether its value is a credential that is never shown. The schemas that
 * validate the values (src/config/env.ts, src/agent/settings.ts) are typed against these names, so a setting cannot
 * be added to one without the other; `tollbooth config` prints the effective configuration in these groups.
 */

/** How a value may be shown: as is, a URL with its credentials blanked, never (a credential), or only as "set" (JSON that may hold keys). */
export type SettingShow = 'plain' | 'url' | 'secret' | 'opaque';

/** One variable: its default as an operator reads it, and how its value may be shown. */
export interface SettingInfo {
  default: string;
  show: SettingShow;
}

const plain = (fallback = '—'): SettingInfo => ({ default: fallback, show: 'plain' });
const address = (fallback = '—'): SettingInfo => ({ default: fallback, show: 'url' });
const secret: SettingInfo = { default: '—', show: 'secret' };
const opaque = (fallback = '—'): SettingInfo => ({ default: fallback, show: 'opaque' });

/** The server's settings, by group (src/config/env.ts validates exactly these names). */
export const SERVER_SETTING_GROUPS = {
  server: {
    NODE_ENV: plain('development'),
    PORT: plain('4021'),
    HOST: plain('127.0.0.1'),
    BASE_URL_TOOLS: address('http://localhost:$PORT'),
    BASE_URL_TOKEN: address('http://localhost:$PORT'),
    BASE_URL_SMM: address('http://localhost:$PORT'),
    BASE_URL_TRANSFERS: address('http://localhost:$PORT'),
    MCP_ALLOWED_HOSTS: plain('loopback and the BASE_URL_* hosts'),
    MCP_SESSION_IDLE_MS: plain('600000'),
    MCP_MAX_SESSIONS: plain('1000'),
    MCP_MAX_SESSIONS_PER_CLIENT: plain('32'),
    SHUTDOWN_TIMEOUT_MS: plain('30000'),
    WORKER_THREADS_PER_TOOL: plain('1 on up to 2 cores, else cores - 1 up to 4'),
    WORKER_QUEUE_PER_TOOL: plain('8'),
    WORKER_JOB_TIMEOUT_MS: plain('30000'),
    METRICS_TOKEN: secret,
    TOLLBOOTH_FOREIGN_ENV: plain(),
  },
  payments: {
    TOLLBOOTH_NETWORK_SET: plain('mainnet'),
    NETWORKS_FILE: plain('the set’s built-in table'),
    NETWORKS_JSON: opaque('the set’s built-in table'),
    BUILDER_CODE: plain('tollbooth'),
    IDEMPOTENCY_TTL_SECONDS: plain('86400'),
    STALE_CLAIM_SECONDS: plain('facilitator + settle timeouts + 60'),
    SMM_ORDER_CANONICAL_V2: plain('off'),
    BATCH_SETTLEMENT: plain('off'),
    BATCH_RECEIVER_AUTHORIZER_KEY: secret,
    BATCH_WITHDRAW_DELAY: plain('86400'),
    BATCH_CLAIM_INTERVAL: plain('3600'),
    BATCH_CLAIM_THRESHOLD: plain('1000000'),
    BATCH_REFUND_IDLE: plain('604800'),
    BATCH_RESERVATION_LEASE: plain('30'),
    MPP: plain('on'),
    MPP_SECRET_KEY: secret,
    MPP_REALM: plain('the host of BASE_URL_TOOLS'),
  },
  'payments.evm': {
    PAY_TO_EVM: plain('development placeholder'),
    FACILITATOR_URL_EVM: address('FACILITATOR_URL'),
    FACILITATOR_EVM_PRIVATE_KEY: secret,
    FACILITATOR_EVM_ADDRESS: plain('the settlement key’s address, else a placeholder'),
  },
  'payments.solana': {
    PAY_TO_SOLANA: plain('development placeholder'),
    FACILITATOR_URL_SOLANA: address('FACILITATOR_URL'),
    FACILITATOR_SOLANA_SECRET_KEY: secret,
    SOLANA_FEE_PAYER: plain('the settlement key’s address, else a placeholder'),
  },
  'payments.stellar': {
    PAY_TO_STELLAR: plain('development placeholder'),
    FACILITATOR_URL_STELLAR: address('FACILITATOR_URL'),
    FACILITATOR_STELLAR_SECRET: secret,
  },
  'payments.algorand': {
    PAY_TO_ALGORAND: plain('development placeholder'),
    FACILITATOR_URL_ALGORAND: address('FACILITATOR_URL'),
    FACILITATOR_ALGORAND_MNEMONIC: secret,
    ALGORAND_FEE_PAYER: plain('the settlement key’s address, else a placeholder'),
  },
  facilitators: {
    FACILITATOR_URL: address('— (testnet set: https://x402.org/facilitator for EVM and Solana)'),
    FACILITATOR_TIMEOUT_MS: plain('15000'),
    FACILITATOR_SETTLE_TIMEOUT_MS: plain('120000'),
    FACILITATOR_HEADERS: secret,
    FACILITATOR_UNSUPPORTED: plain('drop'),
    CDP_API_URL: address('https://api.cdp.coinbase.com/platform'),
    CDP_API_KEY_ID: secret,
    CDP_API_KEY_SECRET: secret,
  },
  store: {
    DATA_DIR: plain('./data'),
    DATABASE_URL: address('— (SQLite under DATA_DIR)'),
    SQLITE_DRIVER: plain('node:sqlite where this Node has it (22.16+), else libsql'),
  },
  limits: {
    TRUST_PROXY: plain('false'),
    RATE_LIMIT_IP_PER_MINUTE: plain('1200'),
    RATE_LIMIT_IP_BURST: plain('300'),
    RATE_LIMIT_PAYER_PER_MINUTE: plain('300'),
    RATE_LIMIT_PAYER_BURST: plain('60'),
    RATE_LIMIT_TOOL_PER_MINUTE: plain('1200'),
    RATE_LIMIT_TOOL_BURST: plain('200'),
    RATE_LIMIT_TOOLS: plain(),
    RATE_LIMIT_SHARED: plain('true with DATABASE_URL, else false'),
  },
  upstreams: {
    HYPERLIQUID_API_URL: address('https://api.hyperliquid.xyz'),
    DEFILLAMA_STABLECOINS_URL: address('https://stablecoins.llama.fi'),
    DEFILLAMA_YIELDS_URL: address('https://yields.llama.fi'),
    WORLDBANK_API_URL: address('https://api.worldbank.org/v2'),
    KALSHI_API_URL: address('https://api.elections.kalshi.com/trade-api/v2'),
    GOPLUS_API_URL: address('https://api.gopluslabs.io/api/v1'),
    DEXSCREENER_API_URL: address('https://api.dexscreener.com'),
    SMM_PANEL_URL: address('— (smm tools answer 501)'),
    SMM_PANEL_KEY: secret,
    UPSTREAM_TIMEOUT_MS: plain('8000'),
    UPSTREAM_RETRIES: plain('2'),
  },
  'chain tools': {
    RPC_URLS: opaque('the network table’s rpcUrl, else public RPCs'),
    FAUCET_PROVIDER: plain('cdp with a CDP key, else self-hosted'),
    FAUCET_EVM_PRIVATE_KEY: secret,
    FAUCET_SOLANA_SECRET_KEY: secret,
    FAUCET_SOLANA_USDC_MINT: plain('4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU'),
    WALLET_READINESS_NETWORKS: plain('EVM networks with an rpcUrl, plus Solana'),
    WALLET_STEP_TIMEOUT_MS: plain('10000'),
    TRANSFERS_CHUNK_BLOCKS: plain('2000'),
    TRANSFERS_MAX_BLOCKS: plain('50000'),
    INDEXER_URL: address('https://base-mainnet.g.alchemy.com/v2'),
    ALCHEMY_API_KEY: secret,
  },
  operations: {
    LOG_LEVEL: plain('info'),
  },
} as const satisfies Record<string, Record<string, SettingInfo>>;

/** The agent side's own settings (src/agent/settings.ts validates these and the shared ones). */
export const AGENT_SETTING_GROUPS = {
  agent: {
    REMOTE_URL: address('— (remote mode off)'),
    REMOTE_URL_TOOLS: address('REMOTE_URL'),
    REMOTE_URL_TOKEN: address('REMOTE_URL'),
    REMOTE_URL_SMM: address('REMOTE_URL'),
    REMOTE_URL_TRANSFERS: address('REMOTE_URL'),
    REMOTE_TIMEOUT_MS: plain('60000'),
    WALLET_EVM_PRIVATE_KEY: secret,
    WALLET_SOLANA_SECRET_KEY: secret,
    WALLET_STELLAR_SECRET: secret,
    WALLET_ALGORAND_MNEMONIC: secret,
    BUDGET_MAX_USD_PER_CALL: plain('0.1'),
    BUDGET_MAX_USD_PER_DAY: plain('1'),
    BUDGET_ASK_ABOVE_USD: plain('— (never asks)'),
    BUDGET_NETWORKS: plain('the first network of the table with a wallet'),
    BUDGET_TOOLS: plain('every tool'),
    PAYMENT_PREFERENCE: plain('—'),
    PAYMENT_PROTOCOLS: plain('x402,mpp'),
    AGENT_BATCH_SETTLEMENT: plain('off'),
    AGENT_BATCH_DEPOSIT_USD: plain('20 × the price, at most what is left of the day’s budget'),
    AGENT_BATCH_IDLE_REFUND_MINUTES: plain('— (idle channels are not refunded on their own)'),
    AGENT_ORIGINS: plain('— (any origin)'),
    AGENT_ORIGIN_LIMITS: plain('— (only the global limits)'),
    AGENT_PRICE_DRIFT: plain('10 (%)'),
    AGENT_DISCOVERY_URLS: plain('— (no index: search finds nothing)'),
    AGENT_CHECK_RECEIPTS: plain('on'),
    AGENT_RECEIPT_CHECK_SECONDS: plain('7'),
  },
} as const satisfies Record<string, Record<string, SettingInfo>>;

/** The settings both sides read (src/shared/env.ts `SHARED_ENV`). */
export const SHARED_SETTINGS = [
  'DATA_DIR',
  'DATABASE_URL',
  'NETWORKS_FILE',
  'NETWORKS_JSON',
  'TOLLBOOTH_NETWORK_SET',
  'LOG_LEVEL',
] as const;

type Names<G> = { [K in keyof G]: keyof G[K] }[keyof G] & string;

/** Every variable name the server reads. */
export type ServerSettingName = Names<typeof SERVER_SETTING_GROUPS>;
/** Every variable name only the agent side reads. */
export type AgentSettingName = Names<typeof AGENT_SETTING_GROUPS>;
/** A variable name both sides read. */
export type SharedSettingName = (typeof SHARED_SETTINGS)[number];

/** One variable of the grouped list, with its group. */
export interface Setting extends SettingInfo {
  name: string;
  group: string;
  /** Which side reads it. */
  side: 'server' | 'agent' | 'both';
}

/** Every variable, in group order: the server's groups, then the agent's. */
export function allSettings(): Setting[] {
  const shared: readonly string[] = SHARED_SETTINGS;
  const rows = (groups: Record<string, Record<string, SettingInfo>>, side: 'server' | 'agent'): Setting[] =>
    Object.entries(groups).flatMap(([group, variables]) =>
      Object.entries(variables).map(([name, info]) => ({
        name,
        group,
        side: shared.includes(name) ? 'both' : side,
        ...info,
      })),
    );
  return [...rows(SERVER_SETTING_GROUPS, 'server'), ...rows(AGENT_SETTING_GROUPS, 'agent')];
}
