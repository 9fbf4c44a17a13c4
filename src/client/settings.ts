/**
 * Settings of the agent side (remote mode of `tollbooth stdio`, `tollbooth call`): the remote deployment's base
 * URLs, the wallets (keys never logged), the budget and the network preference. Parsed once by config.
 */
import type { PaymentProtocol } from '../store/store.js';
import type { ToolGroup } from '../tool-group.js';

/** The raw environment values this module reads (already validated for shape by config's schema). */
export interface ClientEnv {
  REMOTE_URL?: string;
  REMOTE_URL_TOOLS?: string;
  REMOTE_URL_TOKEN?: string;
  REMOTE_URL_SMM?: string;
  REMOTE_URL_TRANSFERS?: string;
  REMOTE_TIMEOUT_MS?: number;
  WALLET_EVM_PRIVATE_KEY?: string;
  WALLET_SOLANA_SECRET_KEY?: string;
  WALLET_STELLAR_SECRET?: string;
  WALLET_ALGORAND_MNEMONIC?: string;
  BUDGET_MAX_USD_PER_CALL?: number;
  BUDGET_MAX_USD_PER_DAY?: number;
  BUDGET_ASK_ABOVE_USD?: number;
  BUDGET_NETWORKS?: string;
  BUDGET_TOOLS?: string;
  PAYMENT_PREFERENCE?: string;
  PAYMENT_PROTOCOLS?: string;
}

/** Parsed wallet keys, one per network family; any subset. Never log them. */
export interface WalletKeys {
  evm?: `0x${string}`;
  /** 64-byte Solana keypair. */
  svm?: Uint8Array;
  /** Stellar secret seed (`S…`); held, but this client cannot pay on Stellar yet. */
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

/** The parsed agent-side settings. */
export interface ClientSettings {
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
}

/** Default budget: ten cents a call, one dollar a day. */
export const DEFAULT_BUDGET = { maxUsdPerCall: 0.1, maxUsdPerDay: 1 } as const;
/** Default time limit of one request to the remote deployment. */
export const DEFAULT_REMOTE_TIMEOUT_MS = 60_000;

const list = (value: string | undefined): string[] | undefined => {
  const items = (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return items.length > 0 ? items : undefined;
};

const stripSlash = (url: string | undefined) => url?.replace(/\/+$/, '');

/** Key parsers shared with the server's settlement keys; each throws with a reason that never echoes the key. */
export interface KeyParsers {
  solana(text: string): Uint8Array;
  stellar(text: string): string;
  algorand(text: string): Uint8Array;
}

/**
 * Builds the agent-side settings from the validated environment; throws an Error naming the variable (never its value).
 * When BUDGET_NETWORKS is unset the agent pays on one network: the first of `table` (the network set's table, in its
 * order) that it holds a wallet for, e.g. Base for an EVM key, so one key never spends on every chain it can sign for.
 */
export function clientSettings(
  env: ClientEnv,
  parse: KeyParsers,
  table: readonly { id: string; family: string }[] = [],
): ClientSettings {
  const key = <T>(name: string, value: string | undefined, fn: (v: string) => T, what: string): T | undefined => {
    if (value === undefined) return undefined;
    try {
      return fn(value);
    } catch {
      throw new Error(`${name} ${what}`);
    }
  };
  const wallets: WalletKeys = {
    ...(env.WALLET_EVM_PRIVATE_KEY ? { evm: env.WALLET_EVM_PRIVATE_KEY as `0x${string}` } : {}),
    ...optional(
      'svm',
      key(
        'WALLET_SOLANA_SECRET_KEY',
        env.WALLET_SOLANA_SECRET_KEY,
        parse.solana,
        'must be a 64-byte Solana keypair (base58, or a solana-keygen JSON array)',
      ),
    ),
    ...optional(
      'stellar',
      key('WALLET_STELLAR_SECRET', env.WALLET_STELLAR_SECRET, parse.stellar, 'must be a Stellar secret seed (S…)'),
    ),
    ...optional(
      'algorand',
      key(
        'WALLET_ALGORAND_MNEMONIC',
        env.WALLET_ALGORAND_MNEMONIC,
        parse.algorand,
        'must be a 25-word Algorand account mnemonic',
      ),
    ),
  };
  const maxUsdPerCall = env.BUDGET_MAX_USD_PER_CALL ?? DEFAULT_BUDGET.maxUsdPerCall;
  const maxUsdPerDay = env.BUDGET_MAX_USD_PER_DAY ?? DEFAULT_BUDGET.maxUsdPerDay;
  const shared = stripSlash(env.REMOTE_URL);
  const remote: Partial<Record<ToolGroup, string>> = {};
  for (const [group, url] of [
    ['tools', env.REMOTE_URL_TOOLS],
    ['token', env.REMOTE_URL_TOKEN],
    ['smm', env.REMOTE_URL_SMM],
    ['transfers', env.REMOTE_URL_TRANSFERS],
  ] as const) {
    const chosen = stripSlash(url) ?? shared;
    if (chosen) remote[group] = chosen;
  }
  const first = table.find((n) => n.family in wallets);
  const networks = list(env.BUDGET_NETWORKS) ?? (first ? [first.id] : undefined);
  const tools = list(env.BUDGET_TOOLS);
  return {
    remote,
    timeoutMs: env.REMOTE_TIMEOUT_MS ?? DEFAULT_REMOTE_TIMEOUT_MS,
    wallets,
    budget: {
      maxUsdPerCall,
      maxUsdPerDay,
      ...(env.BUDGET_ASK_ABOVE_USD !== undefined ? { askAboveUsd: env.BUDGET_ASK_ABOVE_USD } : {}),
      ...(networks ? { networks } : {}),
      ...(tools ? { tools } : {}),
    },
    preference: list(env.PAYMENT_PREFERENCE) ?? [],
    protocols: paymentProtocols(env.PAYMENT_PROTOCOLS),
  };
}

/** PAYMENT_PROTOCOLS read: `x402`, `mpp`, or both in the order preferred; unset, x402 then MPP. Throws naming the variable. */
export function paymentProtocols(value: string | undefined): PaymentProtocol[] {
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

function optional<K extends string, V>(name: K, value: V | undefined): Partial<Record<K, V>> {
  return value === undefined ? {} : ({ [name]: value } as Record<K, V>);
}
