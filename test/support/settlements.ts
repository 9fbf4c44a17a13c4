import { createPublicClient, parseAbiItem, type Address, type Hex } from 'viem';
import type { PaidEnvironment } from './paid.js';
import { localTransport, localViemChain } from './chain/token.js';

const TRANSFER = parseAbiItem('event Transfer(address indexed from, address indexed to, uint256 value)');

/**
 * The chain's own settlement log: the hash of every transaction that moved the token to the pay-to address (each
 * one a settled payment), read from the token's `Transfer` events.
 */
export async function settledOnChain(paid: PaidEnvironment): Promise<Hex[]> {
  const client = createPublicClient({ chain: localViemChain(paid.chain), transport: localTransport(paid.chain) });
  const logs = await client.getLogs({
    address: paid.token,
    event: TRANSFER,
    args: { to: paid.payTo as Address },
    fromBlock: 0n,
    toBlock: 'latest',
  });
  return logs.map((log) => log.transactionHash);
}
