/**
 * Settings of the chain and wallet tools (testnet-fund, wallet-readiness, transfers-evm): RPC URLs per chain, the
 * faucet provider and its keys, the Coinbase Developer Platform (CDP) credentials shared by the hosted faucet and
 * the onramp, the transfer scan's chunking and the optional indexer. Parsed once from the environment by config.
 */
import { z } from 'zod';
import { fixedNetworks, type NetworkSet } from '../../shared/network-sets.js';
import { BASE_MAINNET, BASE_SEPOLIA, SOLANA_DEVNET, SOLANA_MAINNET, type NetworkEntry } from '../../shared/networks.js';
import { parseCdpSecret, type CdpCredentials } from './cdp-auth.js';
import type { UpstreamSettings } from '../upstream.js';

export { BASE_SEPOLIA, SOLANA_DEVNET } from '../../shared/networks.js';

/** The chains the wallet tools name in their inputs (and `RPC_URLS` keys). */
export const CHAIN_NAMES = ['base', 'base-sepolia', 'solana', 'solana-devnet'] as const;
/** One of {@link CHAIN_NAMES}. */
export type ChainName = (typeof CHAIN_NAMES)[number];

/** CAIP-2 id of each named chain (a network-table entry with this id lends its `rpcUrl`). */
export const CHAIN_IDS: Record<ChainName, string> = {
  base: BASE_MAINNET,
  'base-sepolia': BASE_SEPOLIA,
  solana: SOLANA_MAINNET,
  'solana-devnet': SOLANA_DEVNET,
};

/** Public, rate-limited RPC endpoints (docs/spec-notes.md#networks-and-public-rpcs), used when nothing else is configured. */
export const PUBLIC_RPC_URLS: Record<ChainName, string> = {
  base: 'https://mainnet.base.org',
  'base-sepolia': 'https://sepolia.base.org',
  solana: 'https://api.mainnet-beta.solana.com',
  'solana-devnet': 'https://api.devnet.solana.com',
};

/** USDC on Base Sepolia (6 decimals) and on Solana devnet (mint, 6 decimals), as the self-hosted faucet sends them. */
export const TESTNET_USDC = {
  'base-sepolia': '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
  'solana-devnet': '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU',
} as const;

/** The CDP platform API (hosted faucet and onramp sessions). */
export const CDP_API_URL = 'https://api.cdp.coinbase.com/platform';
/** Alchemy's Base mainnet endpoint; `alchemy_getAssetTransfers` is the indexer call. */
export const INDEXER_URL = 'https://base-mainnet.g.alchemy.com/v2';
/** Alchemy's Base Sepolia endpoint: the indexer when transfers-evm reads Base Sepolia (the testnet set). */
export const TESTNET_INDEXER_URL = 'https://base-sepolia.g.alchemy.com/v2';

/**
 * The chain transfers-evm reads (its `chain` is named `base`): the Base it is paid on, so Base on the mainnet set and
 * Base Sepolia on the testnet set (or in a table that holds only Base Sepolia).
 */
function transfersChain(networks: readonly NetworkEntry[], set: NetworkSet): ChainName {
  return fixedNetworks(networks, set).base.id === BASE_SEPOLIA ? 'base-sepolia' : 'base';
}

/** Which drip provider testnet-fund uses. */
export type FaucetProviderName = 'cdp' | 'self-hosted';

/** The parsed settings of the chain and wallet tools. */
export interface ChainToolsSettings {
  /** RPC URL per named chain: `RPC_URLS`, else the network table's `rpcUrl` for that id, else the public endpoint. */
  rpcUrls: Record<ChainName, string>;
  /** Time limit and retries of one RPC request (UPSTREAM_TIMEOUT_MS / UPSTREAM_RETRIES). */
  rpc: { timeoutMs: number; retries: number };
  /** CDP API key (never logged); unset, the hosted faucet and the onramp link are unavailable. */
  cdp: { credentials: CdpCredentials | undefined; faucet: UpstreamSettings; onramp: UpstreamSettings };
  faucet: {
    provider: FaucetProviderName;
    /** Operator's funded Base Sepolia key for the self-hosted faucet. */
    evmKey: `0x${string}` | undefined;
    /** Operator's funded Solana devnet keypair (64 bytes) for the self-hosted faucet. */
    solanaKey: Uint8Array | undefined;
    /** USDC token/mint the self-hosted faucet sends. */
    usdc: { 'base-sepolia': string; 'solana-devnet': string };
  };
  wallet: {
    /** CAIP-2 ids wallet-readiness reads; undefined = every EVM network of the table with an `rpcUrl`, plus Solana. */
    networks: string[] | undefined;
    /** Time limit of each of the three steps. */
    stepTimeoutMs: number;
  };
  transfers: {
    /** The JSON-RPC endpoint transfers-evm reads: Base's, or Base Sepolia's on the testnet set. */
    rpc: { url: string; label: string };
    /** Blocks per `eth_getLogs` request (halved on "range too large" answers). */
    chunkBlocks: number;
    /** Most blocks one call scans over JSON-RPC (newest first). */
    maxBlocks: number;
    /** The indexer (`alchemy_getAssetTransfers`), used instead of the log scan when an API key is set. */
    indexer: { settings: UpstreamSettings; apiKey: string } | undefined;
  };
}

const evmKey = z.string().regex(/^0x[0-9a-fA-F]{64}$/, 'must be a 0x-prefixed 32-byte hex private key');

/** The environment variables of the chain and wallet tools, as config's EnvSchema declares them. */
export interface ChainToolsEnv {
  RPC_URLS?: string | undefined;
  CDP_API_URL?: string | undefined;
  CDP_API_KEY_ID?: string | undefined;
  CDP_API_KEY_SECRET?: string | undefined;
  FAUCET_PROVIDER?: FaucetProviderName | undefined;
  FAUCET_EVM_PRIVATE_KEY?: string | undefined;
  FAUCET_SOLANA_SECRET_KEY?: string | undefined;
  FAUCET_SOLANA_USDC_MINT?: string | undefined;
  WALLET_READINESS_NETWORKS?: string | undefined;
  WALLET_STEP_TIMEOUT_MS?: number | undefined;
  TRANSFERS_CHUNK_BLOCKS?: number | undefined;
  TRANSFERS_MAX_BLOCKS?: number | undefined;
  INDEXER_URL?: string | undefined;
  ALCHEMY_API_KEY?: string | undefined;
  TOLLBOOTH_NETWORK_SET?: NetworkSet | undefined;
}

const RpcUrlsSchema = z.partialRecord(z.enum(CHAIN_NAMES), z.string().url());

function rpcUrls(json: string | undefined, networks: readonly NetworkEntry[]): Record<ChainName, string> {
  let given: Partial<Record<ChainName, string>> = {};
  if (json) {
    let raw: unknown;
    try {
      raw = JSON.parse(json);
    } catch {
      throw new Error('RPC_URLS must be a JSON object such as {"base-sepolia":"https://sepolia.base.org"}');
    }
    const parsed = RpcUrlsSchema.safeParse(raw);
    if (!parsed.success)
      throw new Error(`RPC_URLS: ${z.prettifyError(parsed.error)} (keys: ${CHAIN_NAMES.join(', ')})`);
    given = parsed.data;
  }
  const table = (name: ChainName) => networks.find((n) => n.id === CHAIN_IDS[name])?.rpcUrl;
  return Object.fromEntries(
    CHAIN_NAMES.map((name) => [name, given[name] ?? table(name) ?? PUBLIC_RPC_URLS[name]]),
  ) as Record<ChainName, string>;
}

function upstream(name: string, label: string, baseUrl: string, timeoutMs: number, retries: number): UpstreamSettings {
  return Object.freeze({
    name,
    label,
    baseUrl: baseUrl.replace(/\/+$/, ''),
    timeoutMs,
    retries,
    cacheTtlMs: 0,
    cacheMaxEntries: 0,
  });
}

/** The CDP API key pair, parsed; both variables or neither. */
function cdpCredentials(env: ChainToolsEnv): CdpCredentials | undefined {
  const credentials =
    env.CDP_API_KEY_ID && env.CDP_API_KEY_SECRET
      ? { keyId: env.CDP_API_KEY_ID, key: parseCdpSecret(env.CDP_API_KEY_SECRET) }
      : undefined;
  if (Boolean(env.CDP_API_KEY_ID) !== Boolean(env.CDP_API_KEY_SECRET)) {
    throw new Error('CDP_API_KEY_ID and CDP_API_KEY_SECRET must be set together');
  }
  return credentials;
}

/** The faucet's keypair on Solana devnet, parsed; a bad key is named with a reason that never echoes it. */
function faucetSolanaKey(
  text: string | undefined,
  parseSolanaKey: (text: string) => Uint8Array,
): Uint8Array | undefined {
  if (text === undefined) return undefined;
  try {
    return parseSolanaKey(text);
  } catch (err) {
    // No `cause`: the parser's own errors can quote the whole key (a base58 decoding error does).
    // eslint-disable-next-line preserve-caught-error
    throw new Error(`FAUCET_SOLANA_SECRET_KEY ${(err as Error).message.replace(/[A-Za-z0-9+/=]{20,}/g, '…')}`);
  }
}

/** The faucet's provider, keys and USDC token/mint; the provider defaults to CDP when its credentials are set. */
function faucetSettings(
  env: ChainToolsEnv,
  credentials: CdpCredentials | undefined,
  parseSolanaKey: (text: string) => Uint8Array,
): ChainToolsSettings['faucet'] {
  if (env.FAUCET_EVM_PRIVATE_KEY !== undefined && !evmKey.safeParse(env.FAUCET_EVM_PRIVATE_KEY).success) {
    throw new Error('FAUCET_EVM_PRIVATE_KEY must be a 0x-prefixed 32-byte hex private key');
  }
  const solanaKey = faucetSolanaKey(env.FAUCET_SOLANA_SECRET_KEY, parseSolanaKey);
  const provider = env.FAUCET_PROVIDER ?? (credentials ? 'cdp' : 'self-hosted');
  if (provider === 'cdp' && !credentials)
    throw new Error('FAUCET_PROVIDER=cdp needs CDP_API_KEY_ID and CDP_API_KEY_SECRET');
  return {
    provider,
    evmKey: env.FAUCET_EVM_PRIVATE_KEY as `0x${string}` | undefined,
    solanaKey,
    usdc: {
      'base-sepolia': TESTNET_USDC['base-sepolia'],
      'solana-devnet': env.FAUCET_SOLANA_USDC_MINT ?? TESTNET_USDC['solana-devnet'],
    },
  };
}

/** What transfers-evm reads: the RPC of its chain, the scan's chunking and the indexer when an API key is set. */
function transfersSettings(
  env: ChainToolsEnv,
  urls: Record<ChainName, string>,
  chain: ChainName,
  { timeoutMs, retries }: { timeoutMs: number; retries: number },
): ChainToolsSettings['transfers'] {
  const apiKey = env.ALCHEMY_API_KEY;
  return {
    rpc: { url: urls[chain], label: chain === 'base-sepolia' ? 'Base Sepolia JSON-RPC' : 'Base JSON-RPC' },
    chunkBlocks: env.TRANSFERS_CHUNK_BLOCKS ?? 2_000,
    maxBlocks: env.TRANSFERS_MAX_BLOCKS ?? 50_000,
    indexer: apiKey
      ? {
          settings: upstream(
            'indexer',
            'Alchemy transfers API',
            env.INDEXER_URL ?? (chain === 'base-sepolia' ? TESTNET_INDEXER_URL : INDEXER_URL),
            timeoutMs,
            retries,
          ),
          apiKey,
        }
      : undefined,
  };
}

/**
 * Builds the chain-tool settings; throws an Error whose message names the variable (never its value) when one is
 * invalid. `parseSolanaKey` is config's keypair parser (shared with the facilitator key).
 */
export function chainToolsSettings(
  env: ChainToolsEnv,
  networks: readonly NetworkEntry[],
  upstreamDefaults: { timeoutMs: number; retries: number },
  parseSolanaKey: (text: string) => Uint8Array,
): ChainToolsSettings {
  const { timeoutMs, retries } = upstreamDefaults;
  const cdpUrl = env.CDP_API_URL ?? CDP_API_URL;
  const credentials = cdpCredentials(env);
  const faucet = faucetSettings(env, credentials, parseSolanaKey);
  const urls = rpcUrls(env.RPC_URLS, networks);
  const chain = transfersChain(networks, env.TOLLBOOTH_NETWORK_SET ?? 'mainnet');
  return {
    rpcUrls: urls,
    rpc: { timeoutMs, retries },
    cdp: {
      credentials,
      // A drip is not idempotent: never retried, so a slow answer cannot turn into two drips.
      faucet: upstream('cdp-faucet', 'CDP faucet', cdpUrl, timeoutMs, 0),
      onramp: upstream('cdp-onramp', 'Coinbase Onramp API', cdpUrl, timeoutMs, retries),
    },
    faucet,
    wallet: {
      networks: env.WALLET_READINESS_NETWORKS?.split(',')
        .map((s) => s.trim())
        .filter(Boolean),
      stepTimeoutMs: env.WALLET_STEP_TIMEOUT_MS ?? 10_000,
    },
    transfers: transfersSettings(env, urls, chain, upstreamDefaults),
  };
}
