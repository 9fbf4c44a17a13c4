import { rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import { paymentMiddleware, x402ResourceServer } from '@x402/express';
import express from 'express';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { geoDistance } from '../../tools/geo-distance.js';
import { agentDataDir, spawnAgent, type AgentProcess } from '../support/agent.js';
import { testContext } from '../support/context.js';
import { startLookalikeFacilitator, type LookalikeFacilitator } from '../support/facilitator.js';
import { LOCAL_NETWORK, startPaidEnvironment, type PaidEnvironment } from '../support/paid.js';
import { x402Document } from '../support/x402-catalog.js';

const route = { from: { lat: 48.8566, lng: 2.3522 }, to: { lat: 51.5074, lng: -0.1278 } };

let paid: PaidEnvironment;
let facilitator: LookalikeFacilitator;
let thirdParty: Server;
let thirdPartyUrl: string;
let handled = 0;
const payTo = privateKeyToAccount(generatePrivateKey()).address;
const dataDir = agentDataDir();
let agent: AgentProcess;

/**
 * A minimal third-party x402 server, not Tollbooth: one express route behind the official `@x402/express`
 * middleware, priced "$0.001" on the local chain, verified and settled by a standard HTTP facilitator. It answers
 * at the path of our geo-distance tool and publishes it in `/.well-known/x402`, where the agent's remote mode finds it.
 */
async function startThirdParty(): Promise<void> {
  const resourceServer = new x402ResourceServer(new HTTPFacilitatorClient({ url: facilitator.url })).register(
    LOCAL_NETWORK as `${string}:${string}`,
    new ExactEvmScheme(),
  );
  const app = express();
  app.use(
    paymentMiddleware(
      {
        'POST /api/geo-distance': {
          accepts: { scheme: 'exact', price: '$0.001', network: LOCAL_NETWORK as `${string}:${string}`, payTo },
          description: 'Great-circle distance (third-party)',
          mimeType: 'application/json',
        },
      },
      resourceServer,
    ),
  );
  // Its catalog, which is how remote mode learns the route and its name.
  app.get('/.well-known/x402', (_req, res) => {
    res.json(x402Document([{ resource: '/api/geo-distance', method: 'POST', name: geoDistance.name }]));
  });
  app.post('/api/geo-distance', express.json(), async (req, res) => {
    handled++;
    res.json(await geoDistance.handler(geoDistance.input.parse(req.body), testContext()));
  });
  thirdParty = createServer(app);
  await new Promise<void>((resolve) => thirdParty.listen(0, '127.0.0.1', resolve));
  thirdPartyUrl = `http://127.0.0.1:${(thirdParty.address() as AddressInfo).port}`;
}

beforeAll(async () => {
  paid = await startPaidEnvironment(1);
  facilitator = await startLookalikeFacilitator({
    rpcUrl: paid.chain.rpcUrl,
    chainId: 84532,
    privateKey: paid.env.FACILITATOR_EVM_PRIVATE_KEY as `0x${string}`,
    network: LOCAL_NETWORK,
  });
  await startThirdParty();
  const key = paid.chain.accounts.find((a) => a.address === paid.payers[0]!.address)!.privateKey;
  agent = await spawnAgent(['--remote', thirdPartyUrl], {
    DATA_DIR: dataDir,
    NETWORKS_JSON: paid.env.NETWORKS_JSON!,
    WALLET_EVM_PRIVATE_KEY: key,
    BUDGET_NETWORKS: LOCAL_NETWORK,
  });
}, 120_000);
afterAll(async () => {
  await agent?.close();
  thirdParty?.closeAllConnections();
  await new Promise<void>((resolve) => (thirdParty ? thirdParty.close(() => resolve()) : resolve()));
  await facilitator?.close();
  await paid?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('remote mode against a third-party x402 server (official @x402/express middleware)', () => {
  it('pays the route: the third party is paid exactly its price, and the result and receipt come back', async () => {
    const payer = paid.payers[0]!.address;
    const before = {
      payer: await paid.balance(payer),
      payTo: await paid.balance(payTo),
      settles: facilitator.calls.settle,
    };
    const result = await agent.client.callTool({ name: 'geo-distance', arguments: route });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual(await geoDistance.handler(route, testContext()));
    expect(result._meta?.['x402/payment-response']).toMatchObject({ success: true, network: LOCAL_NETWORK, payer });
    expect(await paid.balance(payer)).toBe(before.payer - 1000n);
    expect(await paid.balance(payTo)).toBe(before.payTo + 1000n);
    expect(facilitator.calls.settle).toBe(before.settles + 1);
    expect(handled).toBe(1);
    const history = (await agent.client.callTool({ name: 'spending-history', arguments: {} })).structuredContent as {
      payments: Array<Record<string, unknown>>;
    };
    expect(history.payments).toEqual([
      expect.objectContaining({
        tool: 'geo-distance',
        resource: `${thirdPartyUrl}/api/geo-distance`,
        status: 'settled',
        usd: '$0.001',
      }),
    ]);
  });
});
