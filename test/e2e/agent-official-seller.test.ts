import { rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { x402Facilitator } from '@x402/core/facilitator';
import type { FacilitatorClient } from '@x402/core/server';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { toFacilitatorEvmSigner } from '@x402/evm';
import { ExactEvmScheme as ExactEvmFacilitatorScheme } from '@x402/evm/exact/facilitator';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import { paymentMiddleware, x402ResourceServer } from '@x402/express';
import express from 'express';
import { createWalletClient, http, publicActions } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { silentLogger } from '../../src/shared/log.js';
import { openStore } from '../../src/store/open.js';
import { geoDistance } from '../../tools/geo-distance.js';
import { agentDataDir, errorOf, spawnAgent, type AgentProcess } from '../support/agent.js';
import { startAnswerProxy, type AnswerProxy } from '../support/answer-proxy.js';
import { localViemChain } from '../support/chain/token.js';
import { testContext } from '../support/context.js';
import { LOCAL_NETWORK, startPaidEnvironment, type PaidEnvironment } from '../support/paid.js';
import { x402Document } from '../support/x402-catalog.js';

const PRICE = 1000n;
const route = { from: { lat: 48.8566, lng: 2.3522 }, to: { lat: 51.5074, lng: -0.1278 } };

let paid: PaidEnvironment;
let seller: Server;
let proxy: AnswerProxy;
let handled = 0;
const payTo = privateKeyToAccount(generatePrivateKey()).address;
const dirs: string[] = [];
const agents: AgentProcess[] = [];

/**
 * A seller built only on the official SDK, not Tollbooth: express + `paymentMiddleware` + `x402ResourceServer`, verified
 * and settled by the official in-process `x402Facilitator` with `ExactEvmScheme` on the local chain. It keeps no result
 * for a payment re-sent after its answer was lost: the re-sent payment is refused as already used.
 */
async function startOfficialSeller(): Promise<string> {
  const account = privateKeyToAccount(paid.env.FACILITATOR_EVM_PRIVATE_KEY as `0x${string}`);
  const client = createWalletClient({
    account,
    chain: localViemChain(paid.chain),
    transport: http(paid.chain.rpcUrl),
  }).extend(publicActions);
  const signer = toFacilitatorEvmSigner({ ...client, address: account.address } as unknown as Parameters<
    typeof toFacilitatorEvmSigner
  >[0]);
  const facilitator = new x402Facilitator().register(
    LOCAL_NETWORK as `${string}:${string}`,
    new ExactEvmFacilitatorScheme(signer),
  );
  const inProcess = {
    verify: (p: PaymentPayload, r: PaymentRequirements) => facilitator.verify(p, r),
    settle: (p: PaymentPayload, r: PaymentRequirements) => facilitator.settle(p, r),
    getSupported: async () => facilitator.getSupported(),
  } as FacilitatorClient;
  const resourceServer = new x402ResourceServer(inProcess).register(
    LOCAL_NETWORK as `${string}:${string}`,
    new ExactEvmScheme(),
  );
  const app = express();
  app.use(
    paymentMiddleware(
      {
        'POST /api/geo-distance': {
          accepts: { scheme: 'exact', price: '$0.001', network: LOCAL_NETWORK as `${string}:${string}`, payTo },
          description: 'Great-circle distance (official seller)',
          mimeType: 'application/json',
        },
      },
      resourceServer,
    ),
  );
  // Its catalog, which is how remote mode learns the route and its name (relative: read through the proxy).
  app.get('/.well-known/x402', (_req, res) => {
    res.json(x402Document([{ resource: '/api/geo-distance', method: 'POST', name: geoDistance.name }]));
  });
  app.post('/api/geo-distance', express.json(), async (req, res) => {
    handled++;
    res.json(await geoDistance.handler(geoDistance.input.parse(req.body), testContext()));
  });
  seller = createServer(app);
  await new Promise<void>((resolve) => seller.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(seller.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  paid = await startPaidEnvironment(4);
  proxy = await startAnswerProxy(await startOfficialSeller());
}, 120_000);
afterAll(async () => {
  await Promise.all(agents.map((a) => a.close().catch(() => undefined)));
  await proxy?.close();
  seller?.closeAllConnections();
  await new Promise<void>((resolve) => (seller ? seller.close(() => resolve()) : resolve()));
  await paid?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** `tollbooth stdio --remote` for payer `i` through the proxy; the network table gives it the local chain's RPC unless `rpcUrl` says otherwise. */
async function agentFor(i: number, rpcUrl = paid.chain.rpcUrl): Promise<AgentProcess> {
  const dataDir = agentDataDir();
  dirs.push(dataDir);
  const key = paid.chain.accounts.find((a) => a.address === paid.payers[i]!.address)!.privateKey;
  const [network] = (JSON.parse(paid.env.NETWORKS_JSON!) as { networks: Array<Record<string, unknown>> }).networks;
  const agent = await spawnAgent(['--remote', proxy.url], {
    DATA_DIR: dataDir,
    NETWORKS_JSON: JSON.stringify({ networks: [{ ...network, rpcUrl }] }),
    WALLET_EVM_PRIVATE_KEY: key,
    BUDGET_NETWORKS: LOCAL_NETWORK,
    REMOTE_TIMEOUT_MS: '1500',
  });
  agents.push(agent);
  return agent;
}

interface HistoryEntry {
  status: string;
  usd: string;
  note?: string;
}
const history = async (agent: AgentProcess) =>
  (await agent.client.callTool({ name: 'spending-history', arguments: {} })).structuredContent as {
    payments: HistoryEntry[];
    budget: { spentToday: string };
  };
/** The cancelled spends in an agent's store (read next to the running agent). */
async function cancelledSpends(dataDir: string) {
  const store = await openStore(loadConfig({ DATA_DIR: dataDir }), silentLogger);
  try {
    return await store.spends.listSpends({ statuses: ['cancelled'] });
  } finally {
    await store.close();
  }
}
const call = (agent: AgentProcess) => agent.client.callTool({ name: 'geo-distance', arguments: route });
const paymentOf = (result: Awaited<ReturnType<typeof call>>) =>
  result._meta?.['tollbooth/payment'] as { status: string; spentToday: string } | undefined;

/** The user's wallet dropped by exactly the settled spends the agent booked, and the budget counts the same. */
async function expectBookedAsPaid(
  agent: AgentProcess,
  payer: `0x${string}`,
  before: bigint,
  settledCount: number,
): Promise<void> {
  expect(await paid.balance(payer)).toBe(before - PRICE * BigInt(settledCount));
  const { payments, budget } = await history(agent);
  expect(payments.filter((p) => p.status === 'settled')).toHaveLength(settledCount);
  expect(payments.filter((p) => p.status === 'cancelled' || p.status === 'failed')).toEqual([]);
  expect(budget.spentToday).toBe(`$${(0.001 * settledCount).toFixed(3)}`);
}

describe('an official @x402/express seller whose answer to a settled payment does not arrive', () => {
  it('lost answer: re-sends the same payment, reads the official "nonce already used" refusal as settled, books and counts it once; the retry pays once more for its own result', async () => {
    const agent = await agentFor(0);
    const payer = paid.payers[0]!.address;
    const before = { balance: await paid.balance(payer), payTo: await paid.balance(payTo), handled };
    proxy.arm({ type: 'cut' });
    const lost = await call(agent);
    expect(errorOf(lost)).toMatchObject({ code: 'payment_failed' });
    expect(errorOf(lost).message).toMatch(
      /was taken, but its answer was lost .*invalid_exact_evm_nonce_already_used.*It is booked as spent; nothing more was paid/,
    );
    expect(paymentOf(lost)).toMatchObject({ status: 'settled', spentToday: '$0.001' });
    expect(handled).toBe(before.handled + 1);
    expect(await paid.balance(payTo)).toBe(before.payTo + PRICE);
    await expectBookedAsPaid(agent, payer, before.balance, 1);

    const retried = await call(agent);
    expect(retried.isError).toBeFalsy();
    expect(retried.structuredContent).toEqual(await geoDistance.handler(route, testContext()));
    expect(paymentOf(retried)).toMatchObject({ status: 'settled', spentToday: '$0.002' });
    await expectBookedAsPaid(agent, payer, before.balance, 2);
  });

  it('late answer: the answer comes after the agent gave up; the same payment re-sent is refused as already used and booked as settled, once', async () => {
    const agent = await agentFor(1);
    const payer = paid.payers[1]!.address;
    const before = { balance: await paid.balance(payer), handled };
    proxy.arm({ type: 'late', ms: 4000 });
    const late = await call(agent);
    expect(errorOf(late)).toMatchObject({ code: 'payment_failed' });
    expect(errorOf(late).message).toMatch(/was taken, but its answer was lost/);
    expect(paymentOf(late)).toMatchObject({ status: 'settled', spentToday: '$0.001' });
    expect(handled).toBe(before.handled + 1);
    await expectBookedAsPaid(agent, payer, before.balance, 1);
  });
});

describe('asking the chain before the budget gets a sent payment back', () => {
  it('an error answer to a payment the seller settled (HTTP 500 instead of the result): the chain says used, so it is booked settled, not free', async () => {
    const agent = await agentFor(2);
    const payer = paid.payers[2]!.address;
    const before = await paid.balance(payer);
    proxy.arm({ type: 'error500' });
    const result = await call(agent);
    expect(errorOf(result)).toMatchObject({ code: 'payment_failed' });
    expect(errorOf(result).message).toMatch(/was taken, but its answer was lost \(the remote answered 500 internal\)/);
    await expectBookedAsPaid(agent, payer, before, 1);
  });

  it('an error answer to a payment that never reached the seller: the chain says unused, so the budget gets it back', async () => {
    const agent = await agentFor(3);
    const payer = paid.payers[3]!.address;
    const before = await paid.balance(payer);
    proxy.arm({ type: 'refuse500' });
    const result = await call(agent);
    expect(result.isError).toBe(true);
    expect(await paid.balance(payer)).toBe(before);
    const { payments, budget } = await history(agent);
    expect(payments).toEqual([]); // cancelled payments are not history
    expect(budget.spentToday).toBe('$0.00');
    expect(await cancelledSpends(dirs.at(-1)!)).toEqual([
      expect.objectContaining({
        status: 'cancelled',
        note: expect.stringMatching(/the chain shows the payment unused/),
      }),
    ]);
  });

  it('when the chain cannot be asked, the payment stays counted and pending, and the user is told so', async () => {
    const agent = await agentFor(3, 'http://127.0.0.1:9');
    const payer = paid.payers[3]!.address;
    const before = await paid.balance(payer);
    proxy.arm({ type: 'refuse500' });
    const result = await call(agent);
    expect(errorOf(result)).toMatchObject({ code: 'payment_pending' });
    expect(errorOf(result).message).toMatch(
      /whether it was taken cannot be checked on chain: the chain could not be asked .*It is not booked as free: it counts against today's budget and is kept/,
    );
    expect(paymentOf(result)).toMatchObject({ status: 'pending', spentToday: '$0.001' });
    expect(await paid.balance(payer)).toBe(before);
    expect((await history(agent)).payments).toEqual([expect.objectContaining({ status: 'pending' })]);
  });
});
