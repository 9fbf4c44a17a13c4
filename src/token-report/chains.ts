/** The chains token-report covers: those the GoPlus token-security API documents (docs/spec-notes.md#goplus-token-security). */

/** One chain token-report accepts, with its ids at each upstream. */
export interface TokenChain {
  /** Our canonical `chain` value. */
  name: string;
  /** Display name used in verdicts. */
  label: string;
  family: 'evm' | 'solana';
  /** GoPlus `chain_id` (EVM only; Solana has its own route). */
  goplusId?: string;
  /** DexScreener `chainId` slug. */
  dexscreener: string;
  /** Every spelling accepted for `chain` (lower case), the canonical name first. */
  aliases: readonly string[];
}

/** Supported chains, in the order error messages list them. */
export const TOKEN_CHAINS: readonly TokenChain[] = [
  {
    name: 'eth',
    label: 'Ethereum',
    family: 'evm',
    goplusId: '1',
    dexscreener: 'ethereum',
    aliases: ['eth', 'ethereum', 'mainnet', '1'],
  },
  { name: 'base', label: 'Base', family: 'evm', goplusId: '8453', dexscreener: 'base', aliases: ['base', '8453'] },
  {
    name: 'bsc',
    label: 'BNB Smart Chain',
    family: 'evm',
    goplusId: '56',
    dexscreener: 'bsc',
    aliases: ['bsc', 'bnb', '56'],
  },
  {
    name: 'arbitrum',
    label: 'Arbitrum One',
    family: 'evm',
    goplusId: '42161',
    dexscreener: 'arbitrum',
    aliases: ['arbitrum', 'arb', '42161'],
  },
  {
    name: 'polygon',
    label: 'Polygon',
    family: 'evm',
    goplusId: '137',
    dexscreener: 'polygon',
    aliases: ['polygon', 'matic', '137'],
  },
  {
    name: 'optimism',
    label: 'OP Mainnet',
    family: 'evm',
    goplusId: '10',
    dexscreener: 'optimism',
    aliases: ['optimism', 'op', '10'],
  },
  {
    name: 'avalanche',
    label: 'Avalanche C-Chain',
    family: 'evm',
    goplusId: '43114',
    dexscreener: 'avalanche',
    aliases: ['avalanche', 'avax', '43114'],
  },
  { name: 'solana', label: 'Solana', family: 'solana', dexscreener: 'solana', aliases: ['solana', 'sol'] },
];

/** The chain a `chain` value names (any alias, any case), or undefined when token-report does not cover it. */
export function findTokenChain(value: string): TokenChain | undefined {
  const wanted = value.trim().toLowerCase();
  return TOKEN_CHAINS.find((c) => c.aliases.includes(wanted));
}

/** The chain of a canonical name; throws for a name that was not validated first. */
export function tokenChain(name: string): TokenChain {
  const found = findTokenChain(name);
  if (!found) throw new Error(`unknown token chain ${name}`);
  return found;
}

/** Canonical chain names, for messages and descriptions. */
export const TOKEN_CHAIN_NAMES = TOKEN_CHAINS.map((c) => c.name);
