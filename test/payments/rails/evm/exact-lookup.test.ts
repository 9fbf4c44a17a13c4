import type { PaymentPayload, PaymentRequired, PaymentRequirements, SettleResponse } from '@x402/core/types';
import { createTestClient, createWalletClient, parseAbi, type Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../../../../src/config/config.js';
import { createFacilitator, type Facilitator } from '../../../../src/payments/facilitators/facilitator.js';
import type { NetworkEntry } from '../../../../src/shared/networks.js';
import { evmExactRail } from '../../../../src/payments/rails/evm/exact.js';
import { buildChallenge } from '../../../../src/payments/challenges/requirements.js';
import { annuity } from '../../../../tools/annuity.js';
import { startLogLimitedRpc, type LogLimitedRpc } from '../../../support/chain/log-limited-rpc.js';
import { localTransport, localViemChain } from '../../../support/chain/token.js';
import { LOCAL_NETWORK, startPaidEnvironment, type PaidEnvironment } from '../../../support/paid.js';
import { signExactPayment } from '../../../support/payer.js';

let paid: PaidEnvironment;
let config: Config;
let facilitator: Facilitator;
let entry: PaymentRequirements;
let rpc: LogLimitedRpc;

beforeAll(async () => {
  paid = await startPaidEnvironment(4);
  config = loadConfig({ DATA_DIR: '/nonexistent-unused', LOG_LEVEL: 'silent', ...paid.env });
  facilitator = await createFacilitator(config);
  const challenge = buildChallenge(config, annuity as never) as PaymentRequired;
  entry = challenge.accepts.find((a) => a.network === LOCAL_NETWORK)!;
  rpc = await startLogLimitedRpc(paid.chain.rpcUrl);
}, 120_000);
afterAll(async () => {
  await rpc?.stop();
  await paid?.stop();
});

/** The local network entry, read through the log-limited RPC in front of the node. */
const net = (): NetworkEntry => ({ ...config.networks.find((n) => n.id === LOCAL_NETWORK)!, rpcUrl: rpc.url });
const pending = (payload: PaymentPayload, transaction = '') => ({
  replayKey: 'k',
  payload,
  requirements: entry,
  transaction,
});
const settle = (payload: PaymentPayload) => facilitator.client.settle(payload, entry) as Promise<SettleResponse>;
const mine = (blocks: number) =>
  createTestClient({ mode: 'hardhat', chain: localViemChain(paid.chain), transport: localTransport(paid.chain) }).mine({
    blocks,
  });

describe('looking up an EIP-3009 payment on chain', () => {
  it('names the transaction of a used authorization from its AuthorizationUsed log when no hash was kept', async () => {
    const payment = await signExactPayment(paid.payers[0]!, entry);
    expect(await evmExactRail.lookup!(pending(payment), net(), config)).toMatchObject({ type: 'pending' });
    const settled = await settle(payment);
    expect(settled.success).toBe(true);
    await mine(3);
    expect(await evmExactRail.lookup!(pending(payment), net(), config)).toEqual({
      type: 'settled',
      transaction: settled.transaction,
    });
  });

  it('asks for the logs in ranges the RPC accepts when it limits eth_getLogs, and still finds the transaction', async () => {
    const payment = await signExactPayment(paid.payers[1]!, entry);
    const settled = await settle(payment);
    await mine(40);
    rpc.maxBlocks = 4n;
    rpc.ranges.length = 0;
    try {
      expect(await evmExactRail.lookup!(pending(payment), net(), config)).toEqual({
        type: 'settled',
        transaction: settled.transaction,
      });
    } finally {
      rpc.maxBlocks = 1_000_000n;
    }
    expect(rpc.ranges.some((r) => r.refused)).toBe(true);
    const asked = rpc.ranges.filter((r) => !r.refused);
    expect(asked.length).toBeGreaterThan(1);
    expect(asked.every((r) => r.to - r.from + 1n <= 4n)).toBe(true);
  });

  it('keeps a used authorization in doubt, never settled without its transaction, when the node has no log of it', async () => {
    const payment = await signExactPayment(paid.payers[2]!, entry);
    await settle(payment);
    rpc.pruned = true;
    try {
      const answer = await evmExactRail.lookup!(pending(payment), net(), config);
      expect(answer.type).toBe('pending');
      expect((answer as { reason?: string }).reason).toMatch(/used, but no AuthorizationUsed log/);
    } finally {
      rpc.pruned = false;
    }
  });

  it('says failed for an authorization the payer cancelled, and for one that expired unused', async () => {
    const payer = paid.payers[3]!;
    const payment = await signExactPayment(payer, entry);
    const nonce = (payment.payload as { authorization: { nonce: Hex } }).authorization.nonce;
    const signature = await payer.signTypedData({
      domain: { name: 'USDC', version: '2', chainId: paid.chain.chainId, verifyingContract: paid.token },
      types: {
        CancelAuthorization: [
          { name: 'authorizer', type: 'address' },
          { name: 'nonce', type: 'bytes32' },
        ],
      },
      primaryType: 'CancelAuthorization',
      message: { authorizer: payer.address, nonce },
    });
    const wallet = createWalletClient({
      account: payer,
      chain: localViemChain(paid.chain),
      transport: localTransport(paid.chain),
    });
    await wallet.writeContract({
      address: paid.token,
      abi: parseAbi(['function cancelAuthorization(address authorizer, bytes32 nonce, bytes signature)']),
      functionName: 'cancelAuthorization',
      args: [payer.address, nonce, signature],
    });
    expect(await evmExactRail.lookup!(pending(payment), net(), config)).toEqual({
      type: 'failed',
      reason: 'authorization_canceled',
    });
    // A minute past validBefore on our clock decides it even though the idle chain's last block is older.
    const old = await signExactPayment(payer, entry, { validBefore: BigInt(Math.floor(Date.now() / 1000) - 120) });
    expect(await evmExactRail.lookup!(pending(old), net(), config)).toEqual({
      type: 'failed',
      reason: 'authorization_expired_unused',
    });
  });
});
