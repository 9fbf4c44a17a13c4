import { z } from 'zod';
import { DEV_FEE_PAYER, DEV_PAY_TO, EnvSchema, type Env } from './env.js';
import type { NetworkEntry, NetworkFamily } from '../shared/networks.js';
import { applyPayToPolicy } from '../payments/reading/pay-to.js';
import { DEFAULT_FACILITATOR_URLS, fixedNetworks, type NetworkSet } from '../shared/network-sets.js';
import { facilitatorAuthSettings, type FacilitatorAuthSettings } from '../payments/facilitators/facilitator-auth.js';
import type { UpstreamSettings } from '../providers/upstream.js';
import { upstreamSettings, type UpstreamId } from './upstreams.js';
import { chainToolsSettings, type ChainToolsSettings } from '../providers/chain/settings.js';
import { limitSettings, parseTrustProxy, type LimitSettings } from '../limits/settings.js';
import { workerSettings, type WorkerSettings } from '../workers/settings.js';
import { mcpSessionSettings, type McpSessionSettings } from '../mcp/session-settings.js';
import { mppSettings, type MppSettings } from '../payments/mpp/settings.js';
import { signerAddresses, type SettlementKeys } from '../payments/facilitators/signers.js';
import { configuredSecrets } from './redact.js';
import { ConfigError, readSecretFiles } from '../shared/env.js';
import { parseAlgorandMnemonic, parseSolanaSecretKey, parseStellarSecret } from '../shared/keys.js';
import { networkTable } from '../shared/network-table.js';
import { batchSettings, type BatchConfigPart } from './batch.js';
import { storeSettings, type StoreConfigPart } from './store.js';

export { DEV_FEE_PAYER, DEV_PAY_TO } from './env.js';
export { ConfigError } from '../shared/env.js';
export type { UpstreamId } from './upstreams.js';

/** The one parsed, frozen configuration of a Tollbooth process. */
export interface Config extends BatchConfigPart, StoreConfigPart {
  production: boolean;
  port: number;
  host: string;
  baseUrls: { tools: string; token: string; smm: string; transfers: string };
  payTo: { evm: string; svm: string; stellar: string; algorand: string };
  /** Advertised families whose pay-to address is a development placeholder (nothing can settle for them). */
  devPayTo: NetworkFamily[];
  /** Families left out of the network table: their payments could settle but their pay-to is a placeholder. */
  droppedFamilies: NetworkFamily[];
  facilitator: {
    /** Remote facilitator per network family (FACILITATOR_URL_<FAMILY>, else FACILITATOR_URL). */
    urls: Record<NetworkFamily, string | undefined>;
    timeoutMs: number;
    /** Settlement waits for the chain, so it gets its own, longer limit; past it the outcome is unknown. */
    settleTimeoutMs: number;
    /** In-process settlement keys; a family with a key is verified and settled in this process. */
    keys: SettlementKeys;
    /** How requests to the remote facilitators authenticate (FACILITATOR_HEADERS, CDP JWT). Never log it. */
    auth: FacilitatorAuthSettings;
    /** What happens to advertised options a facilitator's `/supported` lacks (FACILITATOR_UNSUPPORTED): dropped, or the start refused. */
    unsupported: 'drop' | 'refuse';
  };
  /** Addresses published in `extra` (upto facilitatorAddress, Solana/Algorand feePayer). */
  signers: { evm: string; svm: string; algorand: string; stellar?: string };
  builderCode: string;
  /**
   * How smm-order's one Base entry is advertised (SMM_ORDER_CANONICAL_V2): `false` (default) as the seed published it,
   * under the version-1 short name `base` with the version-1 fields; `true` as a canonical x402 v2 entry (`eip155:8453`).
   */
  smmOrderCanonicalV2: boolean;
  /** How long a `payment-identifier` id keeps its stored result (and stays bound to its request). */
  idempotencyTtlSeconds: number;
  networks: NetworkEntry[];
  /** The built-in table the networks start from (TOLLBOOTH_NETWORK_SET): `mainnet` (default) or `testnet`. */
  networkSet: NetworkSet;
  logLevel: 'info' | 'warn' | 'error' | 'silent';
  /** Host names `/mcp` answers to (DNS-rebinding protection): loopback, the base URLs' hosts, MCP_ALLOWED_HOSTS. */
  mcpAllowedHosts: string[];
  /** Bounds of the streamable-HTTP MCP sessions: in all, per client address, and how long one may idle. */
  mcpSessions: McpSessionSettings;
  /** On SIGTERM/SIGINT, how long running calls may take to finish and settle before they are cut off. */
  shutdownTimeoutMs: number;
  /** Age after which a claim whose call never ended is looked up on chain (STALE_CLAIM_SECONDS); unset, the runtime's default. */
  staleClaimSeconds?: number;
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
  /** Worker threads of the tools whose cost grows with their input (WORKER_*): threads, queue and time limit per tool. */
  workers: WorkerSettings;
  /** The Machine Payments Protocol beside x402 (MPP, MPP_SECRET_KEY, MPP_REALM). Never log it (key). */
  mpp: MppSettings;
  /** The configured credentials (keys, tokens, header values, URL secrets), which logs and answers blank out. Never log it. */
  secrets?: readonly string[];
}

function parseKey<T>(name: string, value: string | undefined, parse: (v: string) => T): T | undefined {
  if (value === undefined) return undefined;
  try {
    return parse(value);
  } catch (err) {
    // The reason never echoes the key itself.
    throw new ConfigError(
      `Invalid configuration: ${name} ${(err as Error).message.replace(/[A-Za-z0-9+/=]{20,}/g, '…')}`,
    );
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
  return {
    ...(evm ? { evm } : {}),
    ...(svm ? { svm } : {}),
    ...(stellar ? { stellar } : {}),
    ...(algorand ? { algorand } : {}),
  };
}

/** The authentication of the facilitators asked over HTTP (families without a settlement key); errors never quote a value. */
function remoteFacilitatorAuth(
  env: Env,
  urls: Record<NetworkFamily, string | undefined>,
  keys: SettlementKeys,
  hasCdpKey: boolean,
): FacilitatorAuthSettings {
  const remote = (Object.keys(urls) as NetworkFamily[]).filter((f) => !keys[f]).map((f) => urls[f]);
  try {
    return facilitatorAuthSettings(
      env.FACILITATOR_HEADERS,
      remote.filter((u): u is string => u !== undefined),
      { apiUrl: env.CDP_API_URL, hasKey: hasCdpKey },
    );
  } catch (err) {
    throw new ConfigError(`Invalid configuration: ${(err as Error).message}`);
  }
}

/** Runs one settings reader; its Error (naming the variable, never its value) becomes a ConfigError. */
function checked<T>(read: () => T, prefix = 'Invalid configuration: '): T {
  try {
    return read();
  } catch (err) {
    throw new ConfigError(`${prefix}${(err as Error).message}`);
  }
}

/** What the payment side is configured with: pay-to addresses, the network table after the pay-to policy, facilitators. */
function paymentSettings(env: Env, production: boolean) {
  const payTo = {
    evm: env.PAY_TO_EVM ?? DEV_PAY_TO.evm,
    svm: env.PAY_TO_SOLANA ?? DEV_PAY_TO.svm,
    stellar: env.PAY_TO_STELLAR ?? DEV_PAY_TO.stellar,
    algorand: env.PAY_TO_ALGORAND ?? DEV_PAY_TO.algorand,
  };
  const placeholders = (Object.keys(payTo) as Array<keyof typeof payTo>).filter((k) => payTo[k] === DEV_PAY_TO[k]);
  const { networkSet, networks: table } = networkTable(env);
  checked(() => fixedNetworks(table, networkSet), `Invalid network table (${env.NETWORKS_FILE ?? 'NETWORKS_JSON'}): `);
  const keys = settlementKeys(env);
  // The set's default facilitator of a family (the public one on the testnet set) when no FACILITATOR_URL* is set, once
  // the family has a real pay-to address: with a placeholder it stays unset, so nothing settles (and an agent needs none).
  const setFacilitator = (family: NetworkFamily) =>
    placeholders.includes(family) ? undefined : DEFAULT_FACILITATOR_URLS[networkSet][family];
  const facilitatorUrls: Record<NetworkFamily, string | undefined> = {
    evm: env.FACILITATOR_URL_EVM ?? env.FACILITATOR_URL ?? setFacilitator('evm'),
    svm: env.FACILITATOR_URL_SOLANA ?? env.FACILITATOR_URL ?? setFacilitator('svm'),
    stellar: env.FACILITATOR_URL_STELLAR ?? env.FACILITATOR_URL ?? setFacilitator('stellar'),
    algorand: env.FACILITATOR_URL_ALGORAND ?? env.FACILITATOR_URL ?? setFacilitator('algorand'),
  };
  // Placeholder pay-to addresses never meet a facilitator that can settle; production needs real ones where advertised.
  const policy = checked(
    () =>
      applyPayToPolicy({
        production,
        networks: table,
        placeholders,
        settles: (f) => Boolean(keys[f] ?? facilitatorUrls[f]),
      }),
    '',
  );
  return { payTo, networkSet, keys, facilitatorUrls, policy };
}

/** The addresses published in `extra`: the settlement keys' own, else the configured ones, else the placeholders. */
function publishedSigners(env: Env, keys: SettlementKeys): Config['signers'] {
  const signers = signerAddresses(keys);
  return {
    evm: signers.evm ?? env.FACILITATOR_EVM_ADDRESS ?? DEV_FEE_PAYER.evm,
    svm: signers.svm ?? env.SOLANA_FEE_PAYER ?? DEV_FEE_PAYER.svm,
    algorand: signers.algorand ?? env.ALGORAND_FEE_PAYER ?? DEV_FEE_PAYER.algorand,
    ...(signers.stellar ? { stellar: signers.stellar } : {}),
  };
}

/** The host names `/mcp` answers to: loopback, the base URLs' hosts and MCP_ALLOWED_HOSTS. */
function allowedHosts(baseUrls: Config['baseUrls'], extra: string | undefined): string[] {
  return [
    ...new Set([
      'localhost',
      '127.0.0.1',
      '[::1]',
      ...Object.values(baseUrls).map((u) => new URL(u).hostname),
      ...(extra ?? '')
        .split(',')
        .map((h) => h.trim())
        .filter(Boolean),
    ]),
  ];
}

/** The public base URLs of the four route groups (BASE_URL_*), each defaulting to `local`. */
function baseUrlsOf(env: z.infer<typeof EnvSchema>, local: string): Config['baseUrls'] {
  return {
    tools: env.BASE_URL_TOOLS ?? local,
    token: env.BASE_URL_TOKEN ?? local,
    smm: env.BASE_URL_SMM ?? local,
    transfers: env.BASE_URL_TRANSFERS ?? local,
  };
}

/** The configured credentials among the schema's variables (after *_FILE is read), which logs and answers blank out. */
function schemaSecrets(rawEnv: NodeJS.ProcessEnv, networks: readonly NetworkEntry[]): string[] {
  const names = Object.keys(EnvSchema.shape);
  const read = readSecretFiles(rawEnv, names);
  return configuredSecrets(Object.fromEntries(names.map((name) => [name, read[name]])), networks);
}

/** Parses configuration from the environment once; throws ConfigError with every problem listed. */
export function loadConfig(rawEnv: NodeJS.ProcessEnv = process.env): Config {
  // Parsed once per process: without zod's JIT, which would compile a fast path (new Function) used only this once.
  const parsed = EnvSchema.safeParse(readSecretFiles(rawEnv, Object.keys(EnvSchema.shape)), { jitless: true });
  if (!parsed.success) {
    throw new ConfigError(`Invalid configuration:\n${z.prettifyError(parsed.error)}`);
  }
  const env = parsed.data;
  const production = env.NODE_ENV === 'production';
  const port = env.PORT ?? 4021;
  const local = `http://localhost:${port}`;
  const { payTo, networkSet, keys, facilitatorUrls, policy } = paymentSettings(env, production);
  const { networks } = policy;
  const upstream = { timeoutMs: env.UPSTREAM_TIMEOUT_MS ?? 8_000, retries: env.UPSTREAM_RETRIES ?? 2 };
  const chainTools = checked(() => chainToolsSettings(env, networks, upstream, parseSolanaSecretKey));
  const limits = checked(() => limitSettings(env, env.DATABASE_URL));
  const trustProxy = checked(() => parseTrustProxy(env.TRUST_PROXY));
  const facilitatorAuth = remoteFacilitatorAuth(env, facilitatorUrls, keys, chainTools.cdp.credentials !== undefined);
  const baseUrls = baseUrlsOf(env, local);
  const mpp = checked(() => mppSettings(env, production, baseUrls.tools));
  return Object.freeze({
    production,
    port,
    host: env.HOST ?? '127.0.0.1',
    baseUrls,
    payTo,
    devPayTo: policy.placeholders,
    droppedFamilies: policy.dropped,
    ...storeSettings(env),
    facilitator: {
      urls: facilitatorUrls,
      timeoutMs: env.FACILITATOR_TIMEOUT_MS ?? 15_000,
      settleTimeoutMs: env.FACILITATOR_SETTLE_TIMEOUT_MS ?? 120_000,
      keys,
      auth: facilitatorAuth,
      unsupported: env.FACILITATOR_UNSUPPORTED ?? 'drop',
    },
    signers: publishedSigners(env, keys),
    builderCode: env.BUILDER_CODE ?? 'tollbooth',
    smmOrderCanonicalV2: env.SMM_ORDER_CANONICAL_V2 === 'on',
    batch: batchSettings(env),
    idempotencyTtlSeconds: env.IDEMPOTENCY_TTL_SECONDS ?? 86_400,
    networks,
    networkSet,
    logLevel: env.LOG_LEVEL ?? 'info',
    mcpAllowedHosts: allowedHosts(baseUrls, env.MCP_ALLOWED_HOSTS),
    mcpSessions: checked(() => mcpSessionSettings(env)),
    shutdownTimeoutMs: env.SHUTDOWN_TIMEOUT_MS ?? 30_000,
    ...(env.STALE_CLAIM_SECONDS !== undefined ? { staleClaimSeconds: env.STALE_CLAIM_SECONDS } : {}),
    ...(env.METRICS_TOKEN ? { metricsToken: env.METRICS_TOKEN } : {}),
    upstreams: upstreamSettings(env),
    ...(env.SMM_PANEL_KEY ? { smmPanelKey: env.SMM_PANEL_KEY } : {}),
    chainTools,
    trustProxy,
    limits,
    workers: workerSettings(env),
    mpp,
    secrets: schemaSecrets(rawEnv, networks),
  });
}
