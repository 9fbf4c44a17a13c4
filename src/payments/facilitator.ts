import { x402Facilitator } from '@x402/core/facilitator';
import { FacilitatorTimeoutError, HTTPFacilitatorClient, type FacilitatorClient } from '@x402/core/server';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { toFacilitatorEvmSigner } from '@x402/evm';
import { ExactEvmScheme } from '@x402/evm/exact/facilitator';
import { createWalletClient, defineChain, http, publicActions, type Chain } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { Config } from '../config.js';
import { evmChainId, type NetworkEntry } from './networks.js';

/** A facilitator the broker talks to, plus which networks it can verify and settle. */
export interface Facilitator {
  client: FacilitatorClient;
  mode: 'remote' | 'in-process' | 'none';
  /** CAIP-2 ids this facilitator can verify and settle `exact` EVM payments on. */
  evmNetworks: ReadonlySet<string>;
}

/** Bounds an in-process facilitator call with the same error the remote client raises on timeout. */
function withTimeout<T>(promise: Promise<T>, ms: number, operation: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new FacilitatorTimeoutError(operation, ms)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Builds the official facilitator signer for one EVM chain from a settlement key and an RPC URL. */
export function createEvmFacilitatorSigner(key: `0x${string}`, chain: Chain, rpcUrl: string, confirmationTimeoutMs: number) {
  const account = privateKeyToAccount(key);
  const client = createWalletClient({ account, chain, transport: http(rpcUrl, { retryCount: 1, retryDelay: 100 }) }).extend(publicActions);
  return toFacilitatorEvmSigner(
    {
      address: account.address,
      readContract: (args) => client.readContract(args as never),
      verifyTypedData: (args) => client.verifyTypedData(args as never),
      writeContract: (args) => client.writeContract({ ...(args as object), chain, account } as never),
      sendTransaction: (args) => client.sendTransaction({ ...(args as object), chain, account } as never),
      waitForTransactionReceipt: (args) => client.waitForTransactionReceipt(args as never),
      getCode: (args) => client.getCode(args as never),
    } as Parameters<typeof toFacilitatorEvmSigner>[0],
    { confirmationTimeoutMs },
  );
}

function evmSigner(net: NetworkEntry, key: `0x${string}`, confirmationTimeoutMs: number) {
  const rpcUrl = net.rpcUrl ?? '';
  const chain = defineChain({
    id: evmChainId(net.id),
    name: net.label ?? net.id,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
  return createEvmFacilitatorSigner(key, chain, rpcUrl, confirmationTimeoutMs);
}

function inProcess(config: Config, key: `0x${string}`): Facilitator {
  const facilitator = new x402Facilitator();
  const networks = new Set<string>();
  for (const net of config.networks) {
    if (net.family !== 'evm' || !net.rpcUrl) continue;
    facilitator.register(net.id as `${string}:${string}`, new ExactEvmScheme(evmSigner(net, key, config.facilitator.settleTimeoutMs)));
    networks.add(net.id);
  }
  const { timeoutMs, settleTimeoutMs } = config.facilitator;
  const client: FacilitatorClient = {
    verify: (p: PaymentPayload, r: PaymentRequirements) => withTimeout(facilitator.verify(p, r), timeoutMs, 'verify'),
    settle: (p: PaymentPayload, r: PaymentRequirements) => withTimeout(facilitator.settle(p, r), settleTimeoutMs, 'settle'),
    getSupported: async () => facilitator.getSupported(),
  } as FacilitatorClient;
  return { client, mode: 'in-process', evmNetworks: networks };
}

const unconfigured: FacilitatorClient = {
  verify: () => Promise.reject(new Error('no facilitator is configured')),
  settle: () => Promise.reject(new Error('no facilitator is configured')),
  getSupported: () => Promise.resolve({ kinds: [], extensions: [], signers: {} }),
} as unknown as FacilitatorClient;

/** Builds the configured facilitator: remote (`FACILITATOR_URL`), in-process (settlement key) or none. */
export function createFacilitator(config: Config): Facilitator {
  if (config.facilitator.url) {
    const { url, timeoutMs, settleTimeoutMs } = config.facilitator;
    const verifier = new HTTPFacilitatorClient({ url, timeoutMs });
    const settler = new HTTPFacilitatorClient({ url, timeoutMs: settleTimeoutMs });
    const client = {
      verify: (p: PaymentPayload, r: PaymentRequirements) => verifier.verify(p, r),
      settle: (p: PaymentPayload, r: PaymentRequirements) => settler.settle(p, r),
      getSupported: () => verifier.getSupported(),
    } as FacilitatorClient;
    const evm = config.networks.filter((n) => n.family === 'evm').map((n) => n.id);
    return { client, mode: 'remote', evmNetworks: new Set(evm) };
  }
  if (config.facilitator.evmPrivateKey) return inProcess(config, config.facilitator.evmPrivateKey);
  return { client: unconfigured, mode: 'none', evmNetworks: new Set() };
}
