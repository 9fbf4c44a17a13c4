/**
 * The `batch-settlement` half of the bench facilitator (stub-facilitator.mjs imports it): the official EVM
 * batch-settlement facilitator scheme, unchanged, relaying with a funded key on a real chain (the Hardhat node the
 * bench starts, with the look-alike escrow at the addresses @x402/evm expects). Deposits are real transactions there;
 * vouchers never reach a facilitator unless a seller's mirror of a channel went stale. The `exact` scheme of the same
 * process keeps its chain answered from memory, so its figures stay comparable with the runs before batch settlement.
 *
 * Environment: BATCH_RPC_URL (the chain's JSON-RPC), BATCH_CHAIN_ID (8453), BATCH_FACILITATOR_KEY (relayer key).
 */
import { BatchSettlementEvmScheme } from '@x402/evm/batch-settlement/facilitator';
import { toFacilitatorEvmSigner } from '@x402/evm';
import { createWalletClient, defineChain, http, publicActions } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';

/** The CAIP-2 network the batch scheme is registered on, or undefined when BATCH_RPC_URL is not set. */
export function batchNetwork() {
  return process.env.BATCH_RPC_URL ? `eip155:${process.env.BATCH_CHAIN_ID ?? '8453'}` : undefined;
}

/** Registers the official batch-settlement facilitator scheme on `facilitator` when BATCH_RPC_URL is set. */
export function registerBatch(facilitator) {
  const network = batchNetwork();
  if (!network) return facilitator;
  const rpcUrl = process.env.BATCH_RPC_URL;
  const chain = defineChain({
    id: Number(network.split(':')[1]),
    name: 'bench chain',
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
    blockTime: 1_000,
    contracts: { multicall3: { address: '0xcA11bde05977b3631167028862bE2a173976CA11' } },
  });
  const relayer = createWalletClient({
    account: privateKeyToAccount(process.env.BATCH_FACILITATOR_KEY),
    chain,
    transport: http(rpcUrl, { retryCount: 0 }),
    pollingInterval: 50,
  }).extend(publicActions);
  const signer = toFacilitatorEvmSigner({
    ...relayer,
    address: relayer.account.address,
    verifyTypedData: (args) => relayer.verifyTypedData(args),
  });
  return facilitator.register(network, new BatchSettlementEvmScheme(signer));
}
