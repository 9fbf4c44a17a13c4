/**
 * A third-party x402 seller built on the official @x402/express middleware whose price, asset and pay-to address a
 * test can change between calls (the middleware's dynamic `price` and `payTo`), verified and settled by the official
 * facilitator on the local chain. It counts every request, and every request that carried a signed payment, so a test
 * can show that a refusal sent nothing, or no signature, to the seller. It sells `GET /quote` (any query).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import { paymentMiddleware, x402ResourceServer } from '@x402/express';
import express from 'express';
import type { Address } from 'viem';
import { inProcessFacilitator } from './official-seller.js';
import { LOCAL_NETWORK, type PaidEnvironment } from './paid.js';

/** What the seller asks for now. */
export interface OriginSellerTerms {
  payTo: Address;
  /** Atomic units of `asset`. */
  amount: string;
  asset: Address;
}

/** A running seller whose terms can change. */
export interface OriginSeller {
  url: string;
  /** Requests of any kind it received. */
  requests: () => number;
  /** Requests that carried a signed payment (`PAYMENT-SIGNATURE`). */
  signed: () => number;
  /** Paid requests the route answered (each after a settled payment). */
  runs: () => number;
  /** Changes what the next challenges ask for. */
  set(terms: Partial<OriginSellerTerms>): void;
  close(): Promise<void>;
}

/** Starts the seller on 127.0.0.1 on a free port, asking `amount` units of the local token paid to `payTo`. */
export async function startOriginSeller(paid: PaidEnvironment, payTo: Address, amount = '1000'): Promise<OriginSeller> {
  const terms: OriginSellerTerms = { payTo, amount, asset: paid.token as Address };
  const resourceServer = new x402ResourceServer(inProcessFacilitator(paid)).register(
    LOCAL_NETWORK as `${string}:${string}`,
    new ExactEvmScheme(),
  );
  const count = { requests: 0, signed: 0, runs: 0 };
  const app = express();
  app.use((req, _res, next) => {
    count.requests++;
    if (req.headers['payment-signature'] !== undefined || req.headers['x-payment'] !== undefined) count.signed++;
    next();
  });
  app.use(
    paymentMiddleware(
      {
        'GET /quote': {
          accepts: {
            scheme: 'exact',
            network: LOCAL_NETWORK as `${string}:${string}`,
            payTo: () => terms.payTo,
            price: () => ({ amount: terms.amount, asset: terms.asset, extra: { name: 'USDC', version: '2' } }),
          },
          description: 'A quote (a seller whose terms change)',
          mimeType: 'application/json',
        },
      },
      resourceServer,
    ),
  );
  app.get('/quote', (_req, res) => {
    count.runs++;
    res.json({ quote: 'paid knowledge', n: count.runs });
  });
  const server: Server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests: () => count.requests,
    signed: () => count.signed,
    runs: () => count.runs,
    set: (next) => Object.assign(terms, next),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
