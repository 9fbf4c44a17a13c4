import { z } from 'zod';

/** The four network families Tollbooth can be paid on. */
export type NetworkFamily = 'evm' | 'svm' | 'stellar' | 'algorand';

const priceColumn = z.enum(['default', 'optimism', 'stellar']);
const schemes = z.array(z.enum(['exact', 'upto'])).min(1);

/** The fields of a network entry with no defaults applied (operator overrides are partial). */
export const NetworkFieldsSchema = z.object({
  id: z.string().regex(/^[a-z0-9-]+:[A-Za-z0-9+/=_-]+$/, 'must be a CAIP-2 id such as eip155:8453'),
  family: z.enum(['evm', 'svm', 'stellar', 'algorand']),
  asset: z.string().min(1).describe('Token contract, mint, Soroban contract id or ASA id.'),
  decimals: z.number().int().min(0).max(36),
  name: z.string().optional().describe('EIP-712 domain name of the asset (EVM).'),
  version: z.string().optional().describe('EIP-712 domain version of the asset (EVM).'),
  rpcUrl: z.string().url().optional(),
  priceColumn: priceColumn.optional(),
  schemes: schemes.optional(),
  label: z.string().optional(),
});

/** One network/asset entry of the payment table (configuration, not code). */
export const NetworkEntrySchema = NetworkFieldsSchema.extend({
  priceColumn: priceColumn.default('default'),
  schemes: schemes.default(['exact']),
});
/** A network entry as used at run time. */
export type NetworkEntry = z.output<typeof NetworkEntrySchema>;

/** CAIP-2 ids of the non-EVM mainnets in the specification. */
export const SOLANA_MAINNET = 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp';
export const STELLAR_PUBNET = 'stellar:pubnet';
export const ALGORAND_MAINNET = 'algorand:wGHE2Pwdvd7S12BL5FaOP20EGYesN73ktiC1qzkkit8=';
export const BASE_MAINNET = 'eip155:8453';

/** CAIP-2 ids of the testnet twins (the testnet set, TOLLBOOTH_NETWORK_SET=testnet). */
export const BASE_SEPOLIA = 'eip155:84532';
/** Solana devnet (the first 32 characters of its genesis hash). */
export const SOLANA_DEVNET = 'solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1';
export const STELLAR_TESTNET = 'stellar:testnet';
/** Algorand testnet in the specification's form (the full genesis hash), like the mainnet id above. */
export const ALGORAND_TESTNET = 'algorand:SGO1GKSzyE7IEPItTxCByw9x8FmnrCDexi9/cOUJOiI=';

/** The version-1 short names this server advertises, by the CAIP-2 network that carries them. */
export const V1_NETWORK_NAMES: Readonly<Record<string, readonly string[]>> = {
  [BASE_MAINNET]: ['base'],
  [BASE_SEPOLIA]: ['base-sepolia'],
};

const evm = (
  chainId: number,
  asset: string,
  name: string,
  label: string,
  extra: Partial<NetworkEntry> = {},
): NetworkEntry => ({
  id: `eip155:${chainId}`,
  family: 'evm',
  asset,
  decimals: 6,
  name,
  version: '2',
  priceColumn: 'default',
  schemes: ['exact'],
  label,
  ...extra,
});

/** The specification's mainnet table, in the order the tools challenge lists it. */
export const DEFAULT_NETWORKS: readonly NetworkEntry[] = [
  evm(8453, '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913', 'USD Coin', 'Base', {
    schemes: ['exact', 'upto'],
    rpcUrl: 'https://mainnet.base.org',
  }),
  evm(137, '0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359', 'USD Coin', 'Polygon', {
    rpcUrl: 'https://polygon-rpc.com',
  }),
  evm(42161, '0xaf88d065e77c8cC2239327C5EDb3A432268e5831', 'USD Coin', 'Arbitrum One', {
    rpcUrl: 'https://arb1.arbitrum.io/rpc',
  }),
  evm(143, '0x754704Bc059F8C67012fEd69BC8A327a5aafb603', 'USDC', 'Monad', {
    rpcUrl: 'https://rpc.monad.xyz',
  }),
  evm(43114, '0xB97EF9Ef8734C71904D8002F8b6Bc66Dd9c48a6E', 'USD Coin', 'Avalanche C-Chain', {
    rpcUrl: 'https://api.avax.network/ext/bc/C/rpc',
  }),
  evm(1329, '0xe15fC38F6D8c56aF07bbCBe3BAf5708A2Bf42392', 'USDC', 'Sei EVM', {
    rpcUrl: 'https://evm-rpc.sei-apis.com',
  }),
  evm(10, '0x0b2C639c533813f4Aa9D7837CAf62653d097Ff85', 'USD Coin', 'OP Mainnet', {
    priceColumn: 'optimism',
    rpcUrl: 'https://mainnet.optimism.io',
  }),
  evm(4663, '0x5fc5360D0400a0Fd4f2af552ADD042D716F1d168', 'Global Dollar', 'Robinhood Chain (USDG)', {
    version: '1',
    rpcUrl: 'https://rpc.mainnet.chain.robinhood.com',
  }),
  evm(42220, '0xcebA9300f2b948710d2653dD7B07f33A8B32118C', 'USDC', 'Celo', {
    rpcUrl: 'https://forno.celo.org',
  }),
  {
    id: SOLANA_MAINNET,
    family: 'svm',
    asset: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
    decimals: 6,
    priceColumn: 'default',
    schemes: ['exact'],
    label: 'Solana',
  },
  {
    id: STELLAR_PUBNET,
    family: 'stellar',
    asset: 'CCW67TSZV3SSS2HXMBQ5JFGCKJNXKZM7UQUWUZPUTHXSTZLEO7SJMI75',
    decimals: 7,
    priceColumn: 'stellar',
    schemes: ['exact'],
    label: 'Stellar',
  },
  {
    id: ALGORAND_MAINNET,
    family: 'algorand',
    asset: '31566704',
    decimals: 6,
    priceColumn: 'default',
    schemes: ['exact'],
    label: 'Algorand',
  },
];

/** Merges operator entries into the default table: same id overrides fields, new ids are appended. */
export function mergeNetworks(
  base: readonly NetworkEntry[],
  overrides: readonly Partial<NetworkEntry>[],
  replace: boolean,
): NetworkEntry[] {
  if (replace) return overrides.map((o) => NetworkEntrySchema.parse(o));
  const merged = base.map((n) => ({ ...n }));
  for (const o of overrides) {
    const at = merged.findIndex((n) => n.id === o.id);
    if (at >= 0) merged[at] = NetworkEntrySchema.parse({ ...merged[at], ...o });
    else merged.push(NetworkEntrySchema.parse(o));
  }
  return merged;
}

/** The chain id of an `eip155:<id>` network. */
export function evmChainId(networkId: string): number {
  return Number(networkId.slice('eip155:'.length));
}
