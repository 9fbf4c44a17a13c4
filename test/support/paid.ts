import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import type { Address } from 'viem';
import type { AnyToolDefinition } from '../../src/tool/tool.js';
import { startLocalChain, type LocalChain } from './chain/node.js';
import { BASE_SEPOLIA_USDC, balanceOf, deployMulticall3IfNeeded, deployTestUsdc, mint } from './chain/token.js';

/** The CAIP-2 id of the local chain: Base Sepolia's id, the first testnet operators configure. */
export const LOCAL_NETWORK = 'eip155:84532';

/** A local chain with our EIP-3009 token, a funded payer and the server environment that settles on it. */
export interface PaidEnvironment {
  chain: LocalChain;
  token: Address;
  payTo: Address;
  payers: PrivateKeyAccount[];
  /** Environment for Tollbooth: custom network entry, in-process facilitator key, pay-to. */
  env: Record<string, string>;
  balance(who: Address): Promise<bigint>;
  stop(): Promise<void>;
}

/** Starts a chain, places TestUSDC at the Base Sepolia USDC address and funds payers with 10 USDC each. */
export async function startPaidEnvironment(
  payerCount = 4,
  options: { sameTimestampBlocks?: boolean } = {},
): Promise<PaidEnvironment> {
  const chain = await startLocalChain({ chainId: 84532, ...options });
  const { address: token } = await deployTestUsdc(chain, { name: 'USDC', version: '2', at: BASE_SEPOLIA_USDC });
  await deployMulticall3IfNeeded(chain);
  const [facilitator, payTo, ...rest] = chain.accounts.slice(1);
  if (!facilitator || !payTo) throw new Error('the local chain has too few accounts');
  const payers = rest.slice(0, payerCount).map((a) => privateKeyToAccount(a.privateKey));
  for (const payer of payers) await mint(chain, token, payer.address, 10_000_000n);
  const network = {
    id: LOCAL_NETWORK,
    family: 'evm',
    asset: token,
    decimals: 6,
    name: 'USDC',
    version: '2',
    rpcUrl: chain.rpcUrl,
    label: 'Base Sepolia (local chain)',
  };
  return {
    chain,
    token,
    payTo: payTo.address,
    payers,
    env: {
      NETWORKS_JSON: JSON.stringify({ networks: [network] }),
      FACILITATOR_EVM_PRIVATE_KEY: facilitator.privateKey,
      PAY_TO_EVM: payTo.address,
    },
    balance: (who) => balanceOf(chain, token, who),
    stop: () => chain.stop(),
  };
}

/** Wraps every tool so a test can count how often each handler really ran. */
export function countingTools(tools: readonly AnyToolDefinition[]): {
  tools: AnyToolDefinition[];
  runs: Map<string, number>;
} {
  const runs = new Map<string, number>();
  const wrapped = tools.map((tool) => ({
    ...tool,
    handler: (input: unknown, ctx: Parameters<AnyToolDefinition['handler']>[1]) => {
      runs.set(tool.name, (runs.get(tool.name) ?? 0) + 1);
      return tool.handler(input, ctx);
    },
  }));
  return { tools: wrapped, runs };
}
