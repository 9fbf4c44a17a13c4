/**
 * The two built-in network tables ("sets"): the specification's mainnet table (the default) and its testnet twins,
 * chosen with TOLLBOOTH_NETWORK_SET=testnet (or `--testnet`). A set decides the table `every-network` tools advertise,
 * the networks of the tools with a single Base (and Solana) option, and the default facilitator of each family.
 */
import {
  ALGORAND_TESTNET,
  BASE_MAINNET,
  BASE_SEPOLIA,
  DEFAULT_NETWORKS,
  SOLANA_DEVNET,
  SOLANA_MAINNET,
  STELLAR_TESTNET,
  type NetworkEntry,
  type NetworkFamily,
  V1_NETWORK_NAMES,
} from './networks.js';

/** The names of the built-in network tables. */
export const NETWORK_SETS = ['mainnet', 'testnet'] as const;
/** One of {@link NETWORK_SETS}: `mainnet` (the default) or `testnet`. */
export type NetworkSet = (typeof NETWORK_SETS)[number];

/**
 * The testnet twins of the default table, in the same order (EVM, then Solana, Stellar, Algorand): USDC on each, at
 * the addresses the official x402 packages use (`@x402/evm` DEFAULT_ASSETS, `@x402/svm`, `@x402/stellar`,
 * `@x402/avm`; a test compares them). Base Sepolia is `exact` only: the public testnet facilitator settles no `upto`.
 * Solana, Stellar and Algorand use their rails' public RPC defaults, as the mainnet entries do.
 */
export const TESTNET_NETWORKS: readonly NetworkEntry[] = [
  {
    id: BASE_SEPOLIA,
    family: 'evm',
    asset: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
    decimals: 6,
    name: 'USDC',
    version: '2',
    rpcUrl: 'https://sepolia.base.org',
    priceColumn: 'default',
    schemes: ['exact'],
    label: 'Base Sepolia',
  },
  {
    id: SOLANA_DEVNET,
    family: 'svm',
    asset: '4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU',
    decimals: 6,
    priceColumn: 'default',
    schemes: ['exact'],
    label: 'Solana devnet',
  },
  {
    id: STELLAR_TESTNET,
    family: 'stellar',
    asset: 'CBIELTK6YBZJU5UP2WWQEUCYKLPU6AUNZ2BQ4WWFEIE3USCIHMXQDAMA',
    decimals: 7,
    priceColumn: 'stellar',
    schemes: ['exact'],
    label: 'Stellar testnet',
  },
  {
    id: ALGORAND_TESTNET,
    family: 'algorand',
    asset: '10458941',
    decimals: 6,
    priceColumn: 'default',
    schemes: ['exact'],
    label: 'Algorand testnet',
  },
];

/** The built-in table of a set (operator entries from NETWORKS_FILE / NETWORKS_JSON are merged onto it). */
export function defaultNetworkTable(set: NetworkSet): readonly NetworkEntry[] {
  return set === 'testnet' ? TESTNET_NETWORKS : DEFAULT_NETWORKS;
}

/** The public facilitator of the x402 project, for test networks (no API key). */
export const PUBLIC_TESTNET_FACILITATOR_URL = 'https://x402.org/facilitator';

/**
 * The remote facilitator each family defaults to when no FACILITATOR_URL* (and no settlement key) is set and the
 * family has a real pay-to address (config). The public testnet facilitator always serves Base Sepolia and Solana
 * devnet (`exact`); Stellar and Algorand testnet are optional in its deployment, so those families keep no default.
 * Mainnet has no default facilitator.
 */
export const DEFAULT_FACILITATOR_URLS: Readonly<Record<NetworkSet, Readonly<Partial<Record<NetworkFamily, string>>>>> =
  {
    mainnet: {},
    testnet: { evm: PUBLIC_TESTNET_FACILITATOR_URL, svm: PUBLIC_TESTNET_FACILITATOR_URL },
  };

/** Base and Solana of each set, the set's own first and its twin second (a table may hold either). */
const BASE_IDS: Record<NetworkSet, readonly string[]> = {
  mainnet: [BASE_MAINNET, BASE_SEPOLIA],
  testnet: [BASE_SEPOLIA, BASE_MAINNET],
};
const SOLANA_IDS: Record<NetworkSet, readonly string[]> = {
  mainnet: [SOLANA_MAINNET, SOLANA_DEVNET],
  testnet: [SOLANA_DEVNET, SOLANA_MAINNET],
};

/** The networks the tools with fixed options are paid on: token-report (Base, Solana), smm-order and transfers-evm (Base). */
export interface FixedNetworks {
  /** Base of the set (Base Sepolia on the testnet set), else the other Base the table holds. */
  base: NetworkEntry;
  /** The version-1 short name of `base` (`base`, `base-sepolia`): transfers-evm's v1 entry and smm-order's short-named entry. */
  baseV1Name: string;
  /** Solana of the set, else the other Solana the table holds; none when the table has neither (token-report lists Base only). */
  solana?: NetworkEntry;
}

/**
 * The fixed-option networks of a table: the set's Base (and Solana), else its twin. Throws when the table holds
 * neither Base nor Base Sepolia (a replaced table without them), naming what is missing.
 */
export function fixedNetworks(networks: readonly NetworkEntry[], set: NetworkSet): FixedNetworks {
  const pick = (ids: readonly string[]) =>
    ids.map((id) => networks.find((n) => n.id === id)).find((n) => n !== undefined);
  const base = pick(BASE_IDS[set]);
  if (!base) {
    throw new Error(
      `the network table has neither Base (${BASE_MAINNET}) nor Base Sepolia (${BASE_SEPOLIA}): token-report, smm-order and transfers-evm are paid there (keep one in a replaced table, or use TOLLBOOTH_NETWORK_SET=testnet)`,
    );
  }
  const solana = pick(SOLANA_IDS[set]);
  return { base, baseV1Name: V1_NETWORK_NAMES[base.id]![0]!, ...(solana ? { solana } : {}) };
}
