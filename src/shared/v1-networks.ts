/**
 * x402 version-1 network names: the EVM ones with their chain ids as `@x402/evm/v1` lists them, the Solana ones with
 * their CAIP-2 ids as `@x402/svm` does (a test keeps each equal to its SDK's): written out here so that reading a
 * network name loads neither SDK, on the selling side (a 402) or the paying one (an agent starting without a wallet).
 */
export const V1_EVM_CHAIN_IDS: Readonly<Record<string, number>> = Object.freeze({
  ethereum: 1,
  sepolia: 11155111,
  abstract: 2741,
  'abstract-testnet': 11124,
  'base-sepolia': 84532,
  base: 8453,
  'avalanche-fuji': 43113,
  avalanche: 43114,
  iotex: 4689,
  sei: 1329,
  'sei-testnet': 1328,
  polygon: 137,
  'polygon-amoy': 80002,
  peaq: 3338,
  story: 1514,
  educhain: 41923,
  'skale-base-sepolia': 324705682,
  megaeth: 4326,
  monad: 143,
  stable: 988,
  'stable-testnet': 2201,
  celo: 42220,
  flare: 14,
});

/** x402 version-1 Solana network names and their CAIP-2 ids, as `@x402/svm` lists them (`V1_TO_V2_NETWORK_MAP`). */
const V1_SOLANA_NETWORKS: Readonly<Record<string, string>> = Object.freeze({
  solana: 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp',
  'solana-devnet': 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1',
  'solana-testnet': 'solana:4uhcVJyU9pJkvQyS88uRDiswHXSCkY3z',
});

const own = (table: Readonly<Record<string, unknown>>, name: string) =>
  Object.prototype.hasOwnProperty.call(table, name);

/** The CAIP-2 id a version-1 name stands for (`base` → `eip155:8453`, `solana-devnet` → `solana:EtWT…`), else undefined. */
export function v1NetworkId(name: string): string | undefined {
  if (own(V1_EVM_CHAIN_IDS, name)) return `eip155:${V1_EVM_CHAIN_IDS[name]}`;
  return own(V1_SOLANA_NETWORKS, name) ? V1_SOLANA_NETWORKS[name] : undefined;
}
