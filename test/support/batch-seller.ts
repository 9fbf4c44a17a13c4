/**
 * A third-party seller that charges with x402 `batch-settlement`, built only on the official SDK: express +
 * `paymentMiddleware` from @x402/express with the official batch-settlement server scheme (in-memory channel
 * storage) and the official in-process facilitator with the batch facilitator scheme, on the local Base chain with
 * the escrow installed. It sells `GET /quote` for `price` base units of the environment's USDC; `GET /broken`, at the same
 * price, always fails (500).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { paymentMiddleware } from '@x402/express';
import express from 'express';
import type { BatchSettlementEnvironment } from './chain/batch-settlement.js';
import { BASE_NETWORK, type BatchParties, startBatchParties } from './chain/batch-settlement-parties.js';

/** A running batch-settlement seller. */
export interface BatchSeller {
  url: string;
  parties: BatchParties;
  /** Paid requests the route answered. */
  runs: () => number;
  close(): Promise<void>;
}

/** Starts the seller on 127.0.0.1 on a free port, paying the environment's pay-to. */
export async function startBatchSeller(env: BatchSettlementEnvironment, price: bigint): Promise<BatchSeller> {
  const parties = await startBatchParties(env, price);
  let runs = 0;
  const app = express();
  const accepts = {
    scheme: 'batch-settlement',
    network: BASE_NETWORK,
    payTo: env.payTo,
    price: { amount: price.toString(), asset: env.token, extra: { name: 'USD Coin', version: '2' } },
    maxTimeoutSeconds: 60,
  };
  const route = (description: string) => ({ accepts, description, mimeType: 'application/json' });
  app.use(
    paymentMiddleware(
      { 'GET /quote': route('A quote (batch-settlement seller)'), 'GET /broken': route('A route that always fails') },
      parties.resourceServer,
    ),
  );
  app.get('/quote', (_req, res) => {
    runs++;
    res.json({ quote: 'batched knowledge', n: runs });
  });
  app.get('/broken', (_req, res) => {
    res.status(500).json({ error: 'upstream_failed' });
  });
  const server: Server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    parties,
    runs: () => runs,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
