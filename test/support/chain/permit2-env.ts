import type { Address } from 'viem';
import { privateKeyToAccount, type PrivateKeyAccount } from 'viem/accounts';
import { BASE_MAINNET } from '../../../src/shared/networks.js';
import { startLocalChain, type LocalChain } from './node.js';
import { approvePermit2, deployPermit2AndUptoProxy } from './permit2.js';
import { BASE_USDC, balanceOf, deployMulticall3IfNeeded, deployTestUsdc, mint } from './token.js';

/** A local chain that answers as Base (chain 8453), with everything the `base` / `eip155:8453` entries need. */
export interface BaseEnvironment {
  chain: LocalChain;
  /** TestUSDC at Base's USDC address, EIP-712 name "USD Coin", version "2" (what the entries advertise). */
  token: Address;
  payTo: Address;
  /** The in-process facilitator's settling address (`extra.facilitatorAddress`). */
  facilitator: Address;
  /** Payers with 10 USDC each; with Permit2, the first `approved` of them have approved it. */
  payers: PrivateKeyAccount[];
  /** Tollbooth environment: the Base entry pointed at the local chain, settlement key, pay-to. */
  env: Record<string, string>;
  balance(who: Address): Promise<bigint>;
  stop(): Promise<void>;
}

/** Options for {@link startBaseEnvironment}. */
export interface BaseEnvironmentOptions {
  /** Place Permit2 and the upto proxy (needed by `upto` only) and let the first `approved` payers approve Permit2. */
  permit2?: { approved: number };
}

/**
 * Starts a hardhat chain with chain id 8453 and places TestUSDC at the Base USDC address and Multicall3 (and, when
 * asked, the real Permit2 and the look-alike upto proxy at their canonical addresses); funds `payerCount` payers.
 * Signatures for `base` (v1) and `eip155:8453` (v2) then verify and settle here.
 */
export async function startBaseEnvironment(
  payerCount: number,
  options: BaseEnvironmentOptions = {},
): Promise<BaseEnvironment> {
  const chain = await startLocalChain({ chainId: 8453, accountCount: Math.min(20, payerCount + 3) });
  try {
    const { address: token } = await deployTestUsdc(chain, { name: 'USD Coin', version: '2', at: BASE_USDC });
    await deployMulticall3IfNeeded(chain);
    if (options.permit2) await deployPermit2AndUptoProxy(chain);
    const [facilitator, payTo, ...rest] = chain.accounts.slice(1);
    if (!facilitator || !payTo || rest.length < payerCount) throw new Error('the local chain has too few accounts');
    const payers = rest.slice(0, payerCount).map((a) => privateKeyToAccount(a.privateKey));
    for (const payer of payers) await mint(chain, token, payer.address, 10_000_000n);
    for (const payer of payers.slice(0, options.permit2?.approved ?? 0)) await approvePermit2(chain, token, payer);
    const override = { id: BASE_MAINNET, rpcUrl: chain.rpcUrl, label: 'Base (local chain 8453)' };
    return {
      chain,
      token,
      payTo: payTo.address,
      facilitator: facilitator.address,
      payers,
      env: {
        NETWORKS_JSON: JSON.stringify({ networks: [override] }),
        FACILITATOR_EVM_PRIVATE_KEY: facilitator.privateKey,
        PAY_TO_EVM: payTo.address,
      },
      balance: (who) => balanceOf(chain, token, who),
      stop: () => chain.stop(),
    };
  } catch (err) {
    await chain.stop();
    throw err;
  }
}
