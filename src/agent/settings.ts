/**
 * Settings of the agent side (remote mode of `tollbooth stdio`, `tollbooth call`), read from the same environment as
 * the server's configuration but by their own schema: the remote deployment's base URLs, the wallets (keys never
 * logged), the budget, the network preference and protocols, and what the agent shares with a server (the store's
 * location, the log level, the network table). Parsed once, by `loadAgentConfig`.
 */
import { resolve } from 'node:path';
import { z } from 'zod';
import type { LogLevel } from '../shared/log.js';
import type { Secret } from '../shared/redact.js';
import type { NetworkEntry } from '../shared/networks.js';
import type { PaymentProtocol } from '../shared/spends.js';
import { ConfigError, list, optional, privateKey, readSecretFiles, SHARED_ENV, url } from '../shared/env.js';
import { parseAlgorandMnemonic, parseSolanaSecretKey, parseStellarSecret } from '../shared/keys.js';
import { networkTable } from '../shared/network-table.js';
import { originSettings, type OriginSettings } from './origins.js';
import { agentSecrets } from './secrets.js';
import type { AgentSettingName, SharedSettingName } from '../shared/setting-groups.js';
import type { ToolGroup } from '../shared/tool-endpoint.js';

const usdLimit = optional(z.coerce.number().nonnegative().max(1_000_000));

/** Every environment variable the agent side reads, validated (`<NAME>_FILE` is resolved before); grouped in src/shared/setting-groups.ts. */
export const AgentEnvSchema = z.object({
  ...SHARED_ENV,
  REMOTE_URL: optional(url),
  REMOTE_URL_TOOLS: optional(url),
  REMOTE_URL_TOKEN: optional(url),
  REMOTE_URL_SMM: optional(url),
  REMOTE_URL_TRANSFERS: optional(url),
  REMOTE_TIMEOUT_MS: optional(z.coerce.number().int().positive()),
  WALLET_EVM_PRIVATE_KEY: optional(privateKey),
  WALLET_SOLANA_SECRET_KEY: optional(z.string()),
  WALLET_STELLAR_SECRET: optional(z.string()),
  WALLET_ALGORAND_MNEMONIC: optional(z.string()),
  BUDGET_MAX_USD_PER_CALL: usdLimit,
  BUDGET_MAX_USD_PER_DAY: usdLimit,
  BUDGET_ASK_ABOVE_USD: usdLimit,
  BUDGET_NETWORKS: optional(z.string()),
  BUDGET_TOOLS: optional(z.string()),
  PAYMENT_PREFERENCE: optional(z.string()),
  PAYMENT_PROTOCOLS: optional(z.string()),
  AGENT_BATCH_SETTLEMENT: optional(z.enum(['on', 'off'], { error: 'must be on or off' })),
  AGENT_BATCH_DEPOSIT_USD: usdLimit,
  AGENT_BATCH_IDLE_REFUND_MINUTES: optional(z.coerce.number().positive()),
  AGENT_ORIGINS: optional(z.string()),
  AGENT_ORIGIN_LIMITS: optional(z.string()),
  AGENT_PRICE_DRIFT: optional(z.string()),
  AGENT_DISCOVERY_URLS: optional(z.string()),
  AGENT_CHECK_RECEIPTS: optional(z.enum(['on', 'off'], { error: 'must be on or off' })),
  AGENT_RECEIPT_CHECK_SECONDS: optional(z.coerce.number().nonnegative().max(600)),
} satisfies Record<AgentSettingName | SharedSettingName, z.ZodType>);

/** The validated agent environment. */
type AgentEnv = z.output<typeof AgentEnvSchema>;

/** Parsed wallet keys, one per network family; any subset. Never log them. */
export interface WalletKeys {
  evm?: `0x${string}`;
  /** 64-byte Solana keypair. */
  svm?: Uint8Array;
  /** Stellar secret seed (`S…`): signs Stellar `exact` payments (stellar-payer.ts). */
  stellar?: string;
  /** 64-byte Algorand secret key. */
  algorand?: Uint8Array;
}

/** What the agent may spend, in US dollars (stablecoins at par). */
export interface BudgetSettings {
  maxUsdPerCall: number;
  maxUsdPerDay: number;
  /** Above this price a payment needs the user's approval (MCP elicitation, or `--yes` on the command line). */
  askAboveUsd?: number;
  /** Network ids or patterns (`eip155:*`) the agent may pay on (BUDGET_NETWORKS; unset, the first network of the table it holds a wallet for). */
  networks?: string[];
  /** Tools the agent may pay for; unset, all. */
  tools?: string[];
}

/** What the agent pays with, where, and under which limits. */
export interface AgentSettings {
  /** Base URL of the remote deployment per tool group (REMOTE_URL_<GROUP>, else REMOTE_URL); unset, remote mode is off. */
  remote: Partial<Record<ToolGroup, string>>;
  /** Time limit of one HTTP request to the remote deployment. */
  timeoutMs: number;
  wallets: WalletKeys;
  budget: BudgetSettings;
  /** Networks (ids or patterns) preferred, in order, among options of the same price. */
  preference: string[];
  /** Payment protocols the agent may pay with, in order of preference (PAYMENT_PROTOCOLS; default x402, then MPP). */
  protocols: PaymentProtocol[];
  /** Paying with x402 `batch-settlement` (a deposit into an escrow channel, then a signed voucher per call). */
  batch: BatchSettings;
  /** Sellers you do not know: allowed origins, per-origin caps, the price-drift tolerance (absent: any origin, no caps, 10%). */
  origins?: OriginSettings;
  /** Discovery indexes `search_services` and `tollbooth search` read (AGENT_DISCOVERY_URLS; absent: none). */
  discovery?: string[];
  /** AGENT_CHECK_RECEIPTS=off: a seller's success receipt is not checked on chain (absent: checked where an RPC is set). */
  checkReceipts?: boolean;
  /** AGENT_RECEIPT_CHECK_SECONDS: how long one receipt check keeps looking for the settlement (absent: 7 s). */
  receiptCheckSeconds?: number;
}

/** How the agent pays with `batch-settlement` (docs/agents.md, Batch settlement). */
export interface BatchSettings {
  /** AGENT_BATCH_SETTLEMENT=on: offered batch-settlement entries are paid (and preferred); off by default. */
  enabled: boolean;
  /** Dollars deposited into a new channel (AGENT_BATCH_DEPOSIT_USD); unset, 20 calls' price. Always at most what is left of the day's budget. */
  depositUsd?: number;
  /** Channels unused this long are refunded by `tollbooth deposits --refund-idle` and when the agent starts. */
  idleRefundMinutes?: number;
}

/** The one parsed, frozen configuration of an agent process. */
export interface AgentConfig {
  /** What the agent pays with, where, and under which limits. Never log it (keys). */
  settings: AgentSettings;
  /** The network table: the set's (TOLLBOOTH_NETWORK_SET) with NETWORKS_JSON/NETWORKS_FILE merged in. */
  networks: NetworkEntry[];
  /** Where the spending ledger is kept: the same store settings as a server's (DATA_DIR, DATABASE_URL). Never log it. */
  store: { dataDir: string; databaseUrl?: string };
  logLevel: LogLevel;
  /** The secrets logs and command output blank (src/agent/secrets.ts); unset, none. Never log it. */
  secrets?: readonly Secret[];
}

/** Default budget: ten cents a call, one dollar a day. */
export const DEFAULT_BUDGET = { maxUsdPerCall: 0.1, maxUsdPerDay: 1 } as const;
/** Default time limit of one request to the remote deployment. */
export const DEFAULT_REMOTE_TIMEOUT_MS = 60_000;

const stripSlash = (value: string | undefined) => value?.replace(/\/+$/, '');

function optionalKey<K extends string, T>(
  family: K,
  name: string,
  value: string | undefined,
  parse: (v: string) => T,
  what: string,
): Partial<Record<K, T>> {
  if (value === undefined) return {};
  try {
    return { [family]: parse(value) } as Record<K, T>;
  } catch {
    throw new Error(`${name} ${what}`);
  }
}

/** The wallet keys; throws an Error naming the variable of a malformed key, never its value. */
function walletKeys(env: AgentEnv): WalletKeys {
  return {
    ...(env.WALLET_EVM_PRIVATE_KEY ? { evm: env.WALLET_EVM_PRIVATE_KEY as `0x${string}` } : {}),
    ...optionalKey(
      'svm',
      'WALLET_SOLANA_SECRET_KEY',
      env.WALLET_SOLANA_SECRET_KEY,
      parseSolanaSecretKey,
      'must be a 64-byte Solana keypair (base58, or a solana-keygen JSON array)',
    ),
    ...optionalKey(
      'stellar',
      'WALLET_STELLAR_SECRET',
      env.WALLET_STELLAR_SECRET,
      parseStellarSecret,
      'must be a Stellar secret seed (S…)',
    ),
    ...optionalKey(
      'algorand',
      'WALLET_ALGORAND_MNEMONIC',
      env.WALLET_ALGORAND_MNEMONIC,
      parseAlgorandMnemonic,
      'must be a 25-word Algorand account mnemonic',
    ),
  };
}

/** The remote base URL of each tool group: its own REMOTE_URL_<GROUP>, else REMOTE_URL, without trailing slashes. */
function remoteUrls(env: AgentEnv): Partial<Record<ToolGroup, string>> {
  const shared = stripSlash(env.REMOTE_URL);
  const remote: Partial<Record<ToolGroup, string>> = {};
  for (const [group, value] of [
    ['tools', env.REMOTE_URL_TOOLS],
    ['token', env.REMOTE_URL_TOKEN],
    ['smm', env.REMOTE_URL_SMM],
    ['transfers', env.REMOTE_URL_TRANSFERS],
  ] as const) {
    const chosen = stripSlash(value) ?? shared;
    if (chosen) remote[group] = chosen;
  }
  return remote;
}

/**
 * Builds the agent's settings from the validated environment; throws an Error naming the variable (never its value).
 * When BUDGET_NETWORKS is unset the agent pays on one network: the first of `table` (the network set's table, in its
 * order) that it holds a wallet for, e.g. Base for an EVM key, so one key never spends on every chain it can sign for.
 */
function agentSettings(env: AgentEnv, table: readonly { id: string; family: string }[] = []): AgentSettings {
  const wallets = walletKeys(env);
  const first = table.find((n) => n.family in wallets);
  const networks = list(env.BUDGET_NETWORKS) ?? (first ? [first.id] : undefined);
  const tools = list(env.BUDGET_TOOLS);
  return {
    remote: remoteUrls(env),
    timeoutMs: env.REMOTE_TIMEOUT_MS ?? DEFAULT_REMOTE_TIMEOUT_MS,
    wallets,
    budget: {
      maxUsdPerCall: env.BUDGET_MAX_USD_PER_CALL ?? DEFAULT_BUDGET.maxUsdPerCall,
      maxUsdPerDay: env.BUDGET_MAX_USD_PER_DAY ?? DEFAULT_BUDGET.maxUsdPerDay,
      ...(env.BUDGET_ASK_ABOVE_USD !== undefined ? { askAboveUsd: env.BUDGET_ASK_ABOVE_USD } : {}),
      ...(networks ? { networks } : {}),
      ...(tools ? { tools } : {}),
    },
    preference: list(env.PAYMENT_PREFERENCE) ?? [],
    protocols: paymentProtocols(env.PAYMENT_PROTOCOLS),
    origins: originSettings(env),
    ...(list(env.AGENT_DISCOVERY_URLS) ? { discovery: list(env.AGENT_DISCOVERY_URLS) } : {}),
    ...(env.AGENT_CHECK_RECEIPTS === 'off' ? { checkReceipts: false } : {}),
    ...(env.AGENT_RECEIPT_CHECK_SECONDS !== undefined ? { receiptCheckSeconds: env.AGENT_RECEIPT_CHECK_SECONDS } : {}),
    batch: {
      enabled: env.AGENT_BATCH_SETTLEMENT === 'on',
      ...(env.AGENT_BATCH_DEPOSIT_USD !== undefined ? { depositUsd: env.AGENT_BATCH_DEPOSIT_USD } : {}),
      ...(env.AGENT_BATCH_IDLE_REFUND_MINUTES !== undefined
        ? { idleRefundMinutes: env.AGENT_BATCH_IDLE_REFUND_MINUTES }
        : {}),
    },
  };
}

/** PAYMENT_PROTOCOLS read: `x402`, `mpp`, or both in the order preferred; unset, x402 then MPP. Throws naming the variable. */
function paymentProtocols(value: string | undefined): PaymentProtocol[] {
  const items = list(value);
  if (!items) return ['x402', 'mpp'];
  const known: readonly string[] = ['x402', 'mpp'];
  if (items.some((p) => !known.includes(p)) || new Set(items).size !== items.length) {
    throw new Error(
      'PAYMENT_PROTOCOLS must list x402 and/or mpp, each once, in the order preferred (e.g. "x402,mpp" or "mpp")',
    );
  }
  return items as PaymentProtocol[];
}

/** The agent's own settings among the environment's variables (the others are not its secrets to know). */
function ownSettings(env: NodeJS.ProcessEnv): Record<string, string | undefined> {
  return Object.fromEntries(Object.keys(AgentEnvSchema.shape).map((name) => [name, env[name]]));
}

/** Parses the agent's configuration from the environment once; throws ConfigError naming each variable to fix. */
export function loadAgentConfig(rawEnv: NodeJS.ProcessEnv = process.env): AgentConfig {
  const resolved = readSecretFiles(rawEnv, Object.keys(AgentEnvSchema.shape));
  const parsed = AgentEnvSchema.safeParse(resolved);
  if (!parsed.success) throw new ConfigError(`Invalid configuration:\n${z.prettifyError(parsed.error)}`);
  const env = parsed.data;
  const { networks } = networkTable(env);
  let settings: AgentSettings;
  try {
    settings = agentSettings(env, networks);
  } catch (err) {
    // The messages name the variable, never its value.
    throw new ConfigError(`Invalid configuration: ${(err as Error).message}`);
  }
  return Object.freeze({
    settings,
    networks,
    store: { dataDir: resolve(env.DATA_DIR ?? 'data'), ...(env.DATABASE_URL ? { databaseUrl: env.DATABASE_URL } : {}) },
    logLevel: env.LOG_LEVEL ?? 'info',
    secrets: agentSecrets(ownSettings(resolved), settings.wallets, networks),
  });
}

/** Whether the settings name a remote deployment (remote mode of `tollbooth stdio`). */
export function hasRemote(config: Pick<AgentConfig, 'settings'>): boolean {
  return Object.keys(config.settings.remote).length > 0;
}
