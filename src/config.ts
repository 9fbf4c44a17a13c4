import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { z } from 'zod';
import { DEV_FEE_PAYER, DEV_PAY_TO, EnvSchema, NetworksOverrideSchema, type Env } from './config-env.js';
import { DEFAULT_NETWORKS, mergeNetworks, type NetworkEntry, type NetworkFamily } from './payments/networks.js';
import type { UpstreamSettings } from './providers/upstream.js';
import { chainToolsSettings, type ChainToolsSettings } from './providers/chain-settings.js';
import { clientSettings, type ClientSettings } from './client/settings.js';
import { limitSettings, parseTrustProxy, type LimitSettings } from './limits/settings.js';
import {
  parseAlgorandMnemonic,
  parseSolanaSecretKey,
  parseStellarSecret,
  signerAddresses,
  type SettlementKeys,
} from './payments/signers.js';

export { DEV_FEE_PAYER, DEV_PAY_TO } from './config-env.js';

/** The one parsed, frozen configuration of a Tollbooth process. */
export interface Config {
  production: boolean;
  port: number;
  host: string;
  baseUrls: { tools: string; token: string; smm: string; transfers: string };
  payTo: { evm: string; svm: string; stellar: string; algorand: string };
  /** Families whose pay-to address is a development placeholder. */
  devPayTo: Array<keyof Config['payTo']>;
  dataDir: string;
  /** PostgreSQL connection URL shared by several instances (DATABASE_URL); unset, the SQLite file under dataDir is used. Never log it. */
  databaseUrl?: string;
  facilitator: {
    /** Remote facilitator per network family (FACILITATOR_URL_<FAMILY>, else FACILITATOR_URL). */
    urls: Record<NetworkFamily, string | undefined>;
    timeoutMs: number;
    /** Settlement waits for the chain, so it gets its own, longer limit; past it the outcome is unknown. */
    settleTimeoutMs: number;
    /** In-process settlement keys; a family with a key is verified and settled in this process. */
    keys: SettlementKeys;
  };
  /** Addresses published in `extra` (upto facilitatorAddress, Solana/Algorand feePayer). */
  signers: { evm: string; svm: string; algorand: string; stellar?: string };
  builderCode: string;
  /** How long a `payment-identifier` id keeps its stored result (and stays bound to its request). */
  idempotencyTtlSeconds: number;
  networks: NetworkEntry[];
  logLevel: 'info' | 'warn' | 'error' | 'silent';
  /** Host names `/mcp` answers to (DNS-rebinding protection): loopback, the base URLs' hosts, MCP_ALLOWED_HOSTS. */
  mcpAllowedHosts: string[];
  /** Streamable-HTTP MCP sessions idle longer than this are closed (clients that never send DELETE). */
  mcpSessionIdleMs: number;
  /** On SIGTERM/SIGINT, how long running calls may take to finish and settle before they are cut off. */
  shutdownTimeoutMs: number;
  /** Bearer token for GET /metrics; unset, /metrics answers loopback connections only. Never log it. */
  metricsToken?: string;
  /** Settings of every market/open-data upstream: base URL (mirrors, look-alikes), timeout, retries, cache. */
  upstreams: Record<UpstreamId, UpstreamSettings>;
  /** API key of the social-marketing panel (SMM_PANEL_KEY); unset (or no SMM_PANEL_URL), the smm endpoints are unavailable. Never log it. */
  smmPanelKey?: string;
  /** RPC URLs, faucet, CDP key, wallet-readiness networks and transfer-scan settings of the chain and wallet tools. Never log it (keys). */
  chainTools: ChainToolsSettings;
  /** express `trust proxy` (TRUST_PROXY): which proxies' X-Forwarded-For names the client IP the per-IP limit counts. */
  trustProxy: boolean | number | string;
  /** Abuse limits (RATE_LIMIT_*): per client IP, per payer, per tool; in the store when shared by instances. */
  limits: LimitSettings;
  /** The agent side (remote mode, `tollbooth call`): remote base URLs, wallets, budget. Never log it (keys). */
  client: ClientSettings;
}

/** The upstreams the market and open-data endpoints read from. */
export type UpstreamId = 'hyperliquid' | 'stablecoins' | 'yields' | 'worldbank' | 'kalshi' | 'goplus' | 'dexscreener' | 'smm';

/** Label, default base URL, cache TTL and cache size of each upstream (URLs per /work/shared/docs/upstream-apis.md). */
const UPSTREAM_DEFAULTS: Record<UpstreamId, { label: string; baseUrl: string; cacheTtlMs: number; cacheMaxEntries: number }> = {
  hyperliquid: { label: 'Hyperliquid info API', baseUrl: 'https://api.hyperliquid.xyz', cacheTtlMs: 5_000, cacheMaxEntries: 500 },
  stablecoins: { label: 'DefiLlama stablecoins API', baseUrl: 'https://stablecoins.llama.fi', cacheTtlMs: 10 * 60_000, cacheMaxEntries: 20 },
  yields: { label: 'DefiLlama yields API', baseUrl: 'https://yields.llama.fi', cacheTtlMs: 10 * 60_000, cacheMaxEntries: 5 },
  worldbank: { label: 'World Bank Indicators API', baseUrl: 'https://api.worldbank.org/v2', cacheTtlMs: 60 * 60_000, cacheMaxEntries: 500 },
  kalshi: { label: 'Kalshi Trade API', baseUrl: 'https://api.elections.kalshi.com/trade-api/v2', cacheTtlMs: 30_000, cacheMaxEntries: 500 },
  goplus: { label: 'GoPlus token security API', baseUrl: 'https://api.gopluslabs.io/api/v1', cacheTtlMs: 10 * 60_000, cacheMaxEntries: 2_000 },
  dexscreener: { label: 'DexScreener API', baseUrl: 'https://api.dexscreener.com', cacheTtlMs: 60_000, cacheMaxEntries: 2_000 },
  // No default panel: the operator names one (SMM_PANEL_URL, the panel's `/api/v2` endpoint).
  smm: { label: 'marketing panel', baseUrl: '', cacheTtlMs: 10 * 60_000, cacheMaxEntries: 500 },
};

/** Thrown for configuration that cannot start a server; the message lists every problem. */
export class ConfigError extends Error {}

/** Reads `<NAME>_FILE` for every known setting NAME that is not set directly (keys and addresses kept out of env). */
function readSecretFiles(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out = { ...env };
  for (const target of Object.keys(EnvSchema.shape)) {
    const file = env[`${target}_FILE`];
    if (!file || out[target] || target === 'NETWORKS_JSON') continue;
    try {
      out[target] = readFileSync(file, 'utf8').trim();
    } catch (err) {
      throw new ConfigError(`Could not read ${target}_FILE (${file}): ${(err as Error).message}`);
    }
  }
  return out;
}

function loadNetworks(file: string | undefined, json: string | undefined): NetworkEntry[] {
  const raw = file ? readFileSync(file, 'utf8') : json;
  if (!raw) return DEFAULT_NETWORKS.map((n) => ({ ...n }));
  const parsed = NetworksOverrideSchema.safeParse(JSON.parse(raw));
  if (!parsed.success) {
    throw new ConfigError(`Invalid network table (${file ?? 'NETWORKS_JSON'}): ${z.prettifyError(parsed.error)}`);
  }
  return mergeNetworks(DEFAULT_NETWORKS, parsed.data.networks, parsed.data.replace);
}


function parseKey<T>(name: string, value: string | undefined, parse: (v: string) => T): T | undefined {
  if (value === undefined) return undefined;
  try {
    return parse(value);
  } catch (err) {
    // The reason never echoes the key itself.
    throw new ConfigError(`Invalid configuration: ${name} ${(err as Error).message.replace(/[A-Za-z0-9+/=]{20,}/g, '…')}`);
  }
}

function settlementKeys(env: Env): SettlementKeys {
  const evm = env.FACILITATOR_EVM_PRIVATE_KEY as `0x${string}` | undefined;
  const svm = parseKey('FACILITATOR_SOLANA_SECRET_KEY', env.FACILITATOR_SOLANA_SECRET_KEY, parseSolanaSecretKey);
  const stellar = parseKey('FACILITATOR_STELLAR_SECRET', env.FACILITATOR_STELLAR_SECRET, (v) => {
    try {
      return parseStellarSecret(v);
    } catch {
      throw new Error('must be a Stellar secret seed (S…)');
    }
  });
  const algorand = parseKey('FACILITATOR_ALGORAND_MNEMONIC', env.FACILITATOR_ALGORAND_MNEMONIC, (v) => {
    try {
      return parseAlgorandMnemonic(v);
    } catch {
      throw new Error('must be a 25-word Algorand account mnemonic');
    }
  });
  return { ...(evm ? { evm } : {}), ...(svm ? { svm } : {}), ...(stellar ? { stellar } : {}), ...(algorand ? { algorand } : {}) };
}

function upstreamSettings(
  urls: Record<UpstreamId, string | undefined>,
  timeoutMs: number,
  retries: number,
): Record<UpstreamId, UpstreamSettings> {
  const ids = Object.keys(UPSTREAM_DEFAULTS) as UpstreamId[];
  return Object.fromEntries(
    ids.map((name) => {
      const { baseUrl, ...rest } = UPSTREAM_DEFAULTS[name];
      return [name, Object.freeze({ name, ...rest, baseUrl: (urls[name] ?? baseUrl).replace(/\/+$/, ''), timeoutMs, retries })];
    }),
  ) as Record<UpstreamId, UpstreamSettings>;
}

/** Parses configuration from the environment once; throws ConfigError with every problem listed. */
export function loadConfig(rawEnv: NodeJS.ProcessEnv = process.env): Config {
  const parsed = EnvSchema.safeParse(readSecretFiles(rawEnv));
  if (!parsed.success) {
    throw new ConfigError(`Invalid configuration:\n${z.prettifyError(parsed.error)}`);
  }
  const env = parsed.data;
  const production = env.NODE_ENV === 'production';
  const port = env.PORT ?? 4021;
  const local = `http://localhost:${port}`;
  const payTo = {
    evm: env.PAY_TO_EVM ?? DEV_PAY_TO.evm,
    svm: env.PAY_TO_SOLANA ?? DEV_PAY_TO.svm,
    stellar: env.PAY_TO_STELLAR ?? DEV_PAY_TO.stellar,
    algorand: env.PAY_TO_ALGORAND ?? DEV_PAY_TO.algorand,
  };
  const devPayTo = (Object.keys(payTo) as Array<keyof typeof payTo>).filter(
    (k) => payTo[k] === DEV_PAY_TO[k],
  );
  if (production && devPayTo.length > 0) {
    const names = { evm: 'PAY_TO_EVM', svm: 'PAY_TO_SOLANA', stellar: 'PAY_TO_STELLAR', algorand: 'PAY_TO_ALGORAND' };
    throw new ConfigError(
      `NODE_ENV=production requires real pay-to addresses; set ${devPayTo.map((k) => names[k]).join(', ')}.`,
    );
  }
  let networks: NetworkEntry[];
  try {
    networks = loadNetworks(env.NETWORKS_FILE, env.NETWORKS_JSON);
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw new ConfigError(`Could not read the network table: ${(err as Error).message}`);
  }
  const keys = settlementKeys(env);
  let chainTools: ChainToolsSettings;
  try {
    chainTools = chainToolsSettings(env, networks, { timeoutMs: env.UPSTREAM_TIMEOUT_MS ?? 8_000, retries: env.UPSTREAM_RETRIES ?? 2 }, parseSolanaSecretKey);
  } catch (err) {
    // The messages name the variable, never its value.
    throw new ConfigError(`Invalid configuration: ${(err as Error).message}`);
  }
  let client: ClientSettings;
  try {
    client = clientSettings(env, { solana: parseSolanaSecretKey, stellar: parseStellarSecret, algorand: parseAlgorandMnemonic });
  } catch (err) {
    // The messages name the variable, never its value.
    throw new ConfigError(`Invalid configuration: ${(err as Error).message}`);
  }
  let limits: LimitSettings;
  let trustProxy: Config['trustProxy'];
  try {
    limits = limitSettings(env, env.DATABASE_URL);
    trustProxy = parseTrustProxy(env.TRUST_PROXY);
  } catch (err) {
    throw new ConfigError(`Invalid configuration: ${(err as Error).message}`);
  }
  const signers = signerAddresses(keys);
  const sharedUrl = env.FACILITATOR_URL;
  const baseUrls = {
    tools: env.BASE_URL_TOOLS ?? local,
    token: env.BASE_URL_TOKEN ?? local,
    smm: env.BASE_URL_SMM ?? local,
    transfers: env.BASE_URL_TRANSFERS ?? local,
  };
  const mcpAllowedHosts = [
    ...new Set([
      'localhost',
      '127.0.0.1',
      '[::1]',
      ...Object.values(baseUrls).map((u) => new URL(u).hostname),
      ...(env.MCP_ALLOWED_HOSTS ?? '').split(',').map((h) => h.trim()).filter(Boolean),
    ]),
  ];
  return Object.freeze({
    production,
    port,
    host: env.HOST ?? '127.0.0.1',
    baseUrls,
    payTo,
    devPayTo,
    dataDir: resolve(env.DATA_DIR ?? 'data'),
    ...(env.DATABASE_URL ? { databaseUrl: env.DATABASE_URL } : {}),
    facilitator: {
      urls: {
        evm: env.FACILITATOR_URL_EVM ?? sharedUrl,
        svm: env.FACILITATOR_URL_SOLANA ?? sharedUrl,
        stellar: env.FACILITATOR_URL_STELLAR ?? sharedUrl,
        algorand: env.FACILITATOR_URL_ALGORAND ?? sharedUrl,
      },
      timeoutMs: env.FACILITATOR_TIMEOUT_MS ?? 15_000,
      settleTimeoutMs: env.FACILITATOR_SETTLE_TIMEOUT_MS ?? 120_000,
      keys,
    },
    signers: {
      evm: signers.evm ?? env.FACILITATOR_EVM_ADDRESS ?? DEV_FEE_PAYER.evm,
      svm: signers.svm ?? env.SOLANA_FEE_PAYER ?? DEV_FEE_PAYER.svm,
      algorand: signers.algorand ?? env.ALGORAND_FEE_PAYER ?? DEV_FEE_PAYER.algorand,
      ...(signers.stellar ? { stellar: signers.stellar } : {}),
    },
    builderCode: env.BUILDER_CODE ?? 'tollbooth',
    idempotencyTtlSeconds: env.IDEMPOTENCY_TTL_SECONDS ?? 86_400,
    networks,
    logLevel: env.LOG_LEVEL ?? 'info',
    mcpAllowedHosts,
    mcpSessionIdleMs: env.MCP_SESSION_IDLE_MS ?? 30 * 60_000,
    shutdownTimeoutMs: env.SHUTDOWN_TIMEOUT_MS ?? 30_000,
    ...(env.METRICS_TOKEN ? { metricsToken: env.METRICS_TOKEN } : {}),
    upstreams: upstreamSettings(
      {
        hyperliquid: env.HYPERLIQUID_API_URL,
        stablecoins: env.DEFILLAMA_STABLECOINS_URL,
        yields: env.DEFILLAMA_YIELDS_URL,
        worldbank: env.WORLDBANK_API_URL,
        kalshi: env.KALSHI_API_URL,
        goplus: env.GOPLUS_API_URL,
        dexscreener: env.DEXSCREENER_API_URL,
        smm: env.SMM_PANEL_URL,
      },
      env.UPSTREAM_TIMEOUT_MS ?? 8_000,
      env.UPSTREAM_RETRIES ?? 2,
    ),
    ...(env.SMM_PANEL_KEY ? { smmPanelKey: env.SMM_PANEL_KEY } : {}),
    chainTools,
    client,
    trustProxy,
    limits,
  });
}
