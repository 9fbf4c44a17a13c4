import { x402Client } from '@x402/core/client';
import { toClientEvmSigner } from '@x402/evm';
import { BatchSettlementEvmScheme as BatchClientScheme } from '@x402/evm/batch-settlement/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import { createPublicClient } from 'viem';
import { generatePrivateKey } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { BatchSettlementEnvironment } from '../../support/chain/batch-settlement.js';
import { BASE_NETWORK } from '../../support/chain/batch-settlement-parties.js';
import { localTransport, localViemChain } from '../../support/chain/token.js';
import { heldTool } from '../../support/held.js';
import type { HttpFacilitator } from '../../support/http-facilitator.js';
import type { TestServer } from '../../support/server.js';
import { startBatchTollbooth } from '../../support/batch-tollbooth.js';

const PRICE = 1000n;
const LEASE_SECONDS = 2;
const held = heldTool('batch-lease-held');

let env: BatchSettlementEnvironment;
let facilitator: HttpFacilitator;
let server: TestServer;

beforeAll(async () => {
  ({ env, facilitator, server } = await startBatchTollbooth({
    payers: 1,
    price: PRICE,
    tools: [held.tool],
    authorizerKey: generatePrivateKey(),
    env: { BATCH_RESERVATION_LEASE: String(LEASE_SECONDS) },
  }));
}, 120_000);

afterAll(async () => {
  held.release();
  await server?.close();
  await facilitator?.close();
  await env?.stop();
});

describe('the lease of a call’s channel reservation (BATCH_RESERVATION_LEASE)', () => {
  it('keeps a live call’s reservation past many leases, each renewal at most one lease ahead, until the call ends', async () => {
    const account = env.payers[0]!;
    const reader = createPublicClient({ chain: localViemChain(env.chain), transport: localTransport(env.chain) });
    const scheme = new BatchClientScheme(toClientEvmSigner(account, reader), {
      depositPolicy: { depositMultiplier: 5 },
    });
    const pay = wrapFetchWithPayment(fetch, new x402Client().register(BASE_NETWORK, scheme));
    const call = pay(`${server.url}${held.tool.path}`, {
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json' },
    });
    await held.started();
    // Three leases go by while the handler runs: the running instance renews the reservation all along.
    for (let lease = 0; lease < 3; lease++) {
      await new Promise((resolve) => setTimeout(resolve, LEASE_SECONDS * 1000));
      const [channel] = await server.runtime.store.channels!.list();
      const now = Date.now();
      expect(channel!.pendingRequest!.expiresAt).toBeGreaterThan(now);
      // Never the scheme's own 300 s: at most one lease ahead of the last renewal.
      expect(channel!.pendingRequest!.expiresAt).toBeLessThanOrEqual(now + LEASE_SECONDS * 1000);
    }
    held.release();
    expect((await call).status).toBe(200);
    const [channel] = await server.runtime.store.channels!.list();
    expect(channel).toMatchObject({ chargedCumulativeAmount: PRICE.toString() });
    expect(channel!.pendingRequest).toBeUndefined();
  }, 60_000);
});
