import { x402Client } from '@x402/core/client';
import { x402Facilitator } from '@x402/core/facilitator';
import { type FacilitatorClient, x402ResourceServer } from '@x402/core/server';
import type { PaymentPayload, PaymentRequirements, SettleResponse, VerifyResponse } from '@x402/core/types';
import { toClientEvmSigner, toFacilitatorEvmSigner } from '@x402/evm';
import {
  BatchSettlementEvmScheme as BatchClientScheme,
  type ClientChannelStorage,
} from '@x402/evm/batch-settlement/client';
import { BatchSettlementEvmScheme as BatchFacilitatorScheme } from '@x402/evm/batch-settlement/facilitator';
import {
  type BatchSettlementChannelManager,
  type ChannelStorage,
  BatchSettlementEvmScheme as BatchServerScheme,
  InMemoryChannelStorage,
} from '@x402/evm/batch-settlement/server';
import { type Address, createPublicClient } from 'viem';
import { type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts';
import { type BatchSettlementEnvironment, chainWallet } from './batch-settlement.js';
import { localTransport, localViemChain } from './token.js';

/** Base mainnet as x402 version 2 names it (the batch-settlement environment's chain id). */
export const BASE_NETWORK = 'eip155:8453' as const;

/** The official facilitator, resource server and server scheme wired to a batch-settlement environment. */
export interface BatchParties {
  facilitator: x402Facilitator;
  /** The in-process facilitator as the resource server's client. */
  facilitatorClient: FacilitatorClient;
  serverScheme: BatchServerScheme;
  resourceServer: x402ResourceServer;
  /** What the resource server advertises for one call at `price` base units of the environment's token. */
  requirements: PaymentRequirements;
  /** The official claim / settle / refund driver for (payTo, token). */
  manager: BatchSettlementChannelManager;
}

/** A payer with its own official client (and client scheme, holding its channel state in memory). */
export interface BatchPayer {
  account: PrivateKeyAccount;
  client: x402Client;
}

/** The result of one paid call run through the official resource server. */
export interface PaidCall {
  payload: PaymentPayload;
  verify: VerifyResponse;
  settle: SettleResponse;
}

/**
 * Builds the official batch-settlement facilitator (relaying with the environment's facilitator key, no authorizer
 * of its own), the server scheme (the environment's receiver-authorizer key, withdraw delay 900 s, in-memory
 * channel storage, or `options.storage`) and a resource server selling one call for `price` base units, asking for EIP-3009 deposits
 * or, with `assetTransferMethod: 'permit2'`, Permit2 deposits.
 */
export async function startBatchParties(
  env: BatchSettlementEnvironment,
  price: bigint,
  options: { assetTransferMethod?: 'eip3009' | 'permit2'; storage?: ChannelStorage } = {},
): Promise<BatchParties> {
  const relayer = chainWallet(env.chain, privateKeyToAccount(env.env.FACILITATOR_EVM_PRIVATE_KEY as `0x${string}`));
  // viem's verifyTypedData wants literal EIP-712 types; x402's signer passes a plain record.
  const signer = toFacilitatorEvmSigner({
    ...relayer,
    address: relayer.account.address,
    verifyTypedData: (args) => relayer.verifyTypedData(args as never),
  });
  const facilitator = new x402Facilitator().register(BASE_NETWORK, new BatchFacilitatorScheme(signer));
  const facilitatorClient = {
    verify: (p: PaymentPayload, r: PaymentRequirements) => facilitator.verify(p, r),
    settle: (p: PaymentPayload, r: PaymentRequirements) => facilitator.settle(p, r),
    getSupported: async () => facilitator.getSupported(),
  } as FacilitatorClient;
  const serverScheme = new BatchServerScheme(env.payTo, {
    receiverAuthorizerSigner: env.receiverAuthorizer,
    withdrawDelay: 900,
    storage: options.storage ?? new InMemoryChannelStorage(),
  });
  const resourceServer = new x402ResourceServer(facilitatorClient).register(BASE_NETWORK, serverScheme);
  await resourceServer.initialize();
  const [requirements] = await resourceServer.buildPaymentRequirements({
    scheme: 'batch-settlement',
    network: BASE_NETWORK,
    payTo: env.payTo,
    price: { amount: price.toString(), asset: env.token, extra: { name: 'USD Coin', version: '2' } },
    maxTimeoutSeconds: 60,
    ...(options.assetTransferMethod ? { extra: { assetTransferMethod: options.assetTransferMethod } } : {}),
  });
  if (!requirements) throw new Error('the resource server built no batch-settlement requirements');
  const manager = serverScheme.createChannelManager(facilitatorClient, BASE_NETWORK, env.token);
  return { facilitator, facilitatorClient, serverScheme, resourceServer, requirements, manager };
}

/**
 * An official x402 client for `account` with the batch-settlement client scheme (deposits of 5 calls' price, or
 * `options.depositMultiplier`, or exactly `options.deposit`; channel state in memory, or in `options.storage`).
 */
export function batchPayer(
  env: Pick<BatchSettlementEnvironment, 'chain'>,
  account: PrivateKeyAccount,
  options: { depositMultiplier?: number; storage?: ClientChannelStorage; deposit?: bigint } = {},
): BatchPayer {
  const reader = createPublicClient({ chain: localViemChain(env.chain), transport: localTransport(env.chain) });
  const scheme = new BatchClientScheme(toClientEvmSigner(account, reader), {
    depositPolicy: { depositMultiplier: options.depositMultiplier ?? 5 },
    ...(options.storage ? { storage: options.storage } : {}),
    ...(options.deposit ? { depositStrategy: () => options.deposit } : {}),
  });
  return { account, client: new x402Client().register(BASE_NETWORK, scheme) };
}

/**
 * Runs one paid call the way a seller does: 402 challenge, the payer's payload, verify, (the handler), settle,
 * and the payer's processing of the settle response. Throws when verification or settlement fails.
 */
export async function paidCall(parties: BatchParties, payer: BatchPayer): Promise<PaidCall> {
  const { resourceServer, requirements } = parties;
  const resource = { url: 'http://127.0.0.1/tool', description: 'a paid tool', mimeType: 'application/json' };
  const required = await resourceServer.createPaymentRequiredResponse([requirements], resource);
  const payload = await payer.client.createPaymentPayload(required);
  const matched = resourceServer.findMatchingRequirements([requirements], payload);
  if (!matched) throw new Error('the payload matches no advertised requirements');
  const verify = await resourceServer.verifyPayment(payload, matched);
  if (!verify.isValid) throw new Error(`verification failed: ${verify.invalidReason ?? 'unknown'}`);
  const settle = await resourceServer.settlePayment(payload, matched);
  if (!settle.success) throw new Error(`settlement failed: ${settle.errorReason ?? 'unknown'}`);
  await payer.client.handlePaymentResponse({ paymentPayload: payload, requirements: matched, settleResponse: settle });
  return { payload, verify, settle };
}

/** The channel config a payload carries (deposit and voucher payloads both do). */
export function payloadChannel(payload: PaymentPayload): {
  channelId: `0x${string}`;
  maxClaimableAmount: bigint;
  config: {
    payer: Address;
    payerAuthorizer: Address;
    receiver: Address;
    receiverAuthorizer: Address;
    token: Address;
    withdrawDelay: number;
    salt: `0x${string}`;
  };
  signature: `0x${string}`;
} {
  const raw = payload.payload as {
    channelConfig: ReturnType<typeof payloadChannel>['config'];
    voucher: { channelId: `0x${string}`; maxClaimableAmount: string; signature: `0x${string}` };
  };
  return {
    channelId: raw.voucher.channelId,
    maxClaimableAmount: BigInt(raw.voucher.maxClaimableAmount),
    config: raw.channelConfig,
    signature: raw.voucher.signature,
  };
}
