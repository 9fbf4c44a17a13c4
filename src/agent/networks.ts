import type { NetworkEntry, NetworkFamily } from '../shared/networks.js';
import { v1NetworkId } from '../shared/v1-networks.js';

/** The CAIP-2 id of an option's network: itself, or the id a version-1 short name (`base`, `solana-devnet`) stands for. */
export function canonicalNetwork(network: string): string {
  return network.includes(':') ? network : (v1NetworkId(network) ?? network);
}

/** The network family of a CAIP-2 id, or undefined for a namespace this client does not know. */
export function familyOf(canonical: string): NetworkFamily | undefined {
  const namespace = canonical.split(':', 1)[0];
  switch (namespace) {
    case 'eip155':
      return 'evm';
    case 'solana':
      return 'svm';
    case 'stellar':
      return 'stellar';
    case 'algorand':
      return 'algorand';
    default:
      return undefined;
  }
}

/** Whether a network id matches one of the patterns (`eip155:8453`, `eip155:*`, `*`). */
export function matchesAny(network: string, patterns: readonly string[]): boolean {
  return patterns.some((p) => patternIndex(network, [p]) === 0);
}

/** Index of the first pattern a network id matches, or -1. */
export function patternIndex(network: string, patterns: readonly string[]): number {
  return patterns.findIndex((pattern) => {
    if (pattern === '*' || pattern === network) return true;
    if (pattern.endsWith('*')) return network.startsWith(pattern.slice(0, -1));
    return canonicalNetwork(pattern) === network;
  });
}

/** The network table entry for a CAIP-2 id and asset (the asset compared case-insensitively), if the agent's table lists it. */
export function tableEntry(
  networks: readonly NetworkEntry[],
  canonical: string,
  asset: string,
): NetworkEntry | undefined {
  return networks.find((n) => n.id === canonical && n.asset.toLowerCase() === asset.toLowerCase());
}

/** The table's RPC URL (EVM JSON-RPC, Solana RPC, algod) for a network, whatever its asset. */
export function rpcUrlOf(networks: readonly NetworkEntry[], canonical: string): string | undefined {
  return networks.find((n) => n.id === canonical && n.rpcUrl)?.rpcUrl;
}
