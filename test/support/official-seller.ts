/**
 * A third-party x402 seller built only on the official SDK, not Tollbooth: express + `paymentMiddleware` from
 * @x402/express (version 2 challenges in `PAYMENT-REQUIRED`), verified and settled by the official in-process
 * `x402Facilitator` with `ExactEvmScheme` on the local chain. It sells `GET /quote` for $0.001.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { x402Facilitator } from '@x402/core/facilitator';
import type { FacilitatorClient } from '@x402/core/server';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { toFacilitatorEvmSigner } from '@x402/evm';
import { ExactEvmScheme as ExactEvmFacilitatorScheme } from '@x402/evm/exact/facilitator';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import { ExactEvmSchemeV1 } from '@x402/evm/exact/v1/facilitator';
import { paymentMiddleware, x402ResourceServer } from '@x402/express';
import express from 'express';
import { createWalletClient, http, publicActions, type Address } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { localViemChain } from './chain/token.js';
import { LOCAL_NETWORK, type PaidEnvironment } from './paid.js';

/** A running official seller. */
export interface OfficialSeller {
  url: string;
  /** Paid requests the route answered (each after a settled payment). */
  runs: () => number;
  close(): Promise<void>;
}

/** The official facilitator (version 2 `exact` on the local network, version 1 `exact` on `base-sepolia`), in this process. */
export function officialFacilitator(paid: PaidEnvironment): x402Facilitator {
  const account = privateKeyToAccount(paid.env.FACILITATOR_EVM_PRIVATE_KEY as `0x${string}`);
  const client = createWalletClient({
    account,
    chain: localViemChain(paid.chain),
    transport: http(paid.chain.rpcUrl),
  }).extend(publicActions);
  const signer = toFacilitatorEvmSigner({ ...client, address: account.address } as unknown as Parameters<
    typeof toFacilitatorEvmSigner
  >[0]);
  return new x402Facilitator()
    .register(LOCAL_NETWORK as `${string}:${string}`, new ExactEvmFacilitatorScheme(signer))
    .registerV1('base-sepolia' as `${string}:${string}`, new ExactEvmSchemeV1(signer));
}

/** The official facilitator as the resource server's client. */
export function inProcessFacilitator(paid: PaidEnvironment): FacilitatorClient {
  const facilitator = officialFacilitator(paid);
  return {
    verify: (p: PaymentPayload, r: PaymentRequirements) => facilitator.verify(p, r),
    settle: (p: PaymentPayload, r: PaymentRequirements) => facilitator.settle(p, r),
    getSupported: async () => facilitator.getSupported(),
  } as FacilitatorClient;
}

/** Starts the seller on 127.0.0.1 on a free port, paying `payTo`, selling `GET /quote` at `price` (default $0.001). */
export async function startOfficialSeller(
  paid: PaidEnvironment,
  payTo: Address,
  price = '$0.001',
): Promise<OfficialSeller> {
  const resourceServer = new x402ResourceServer(inProcessFacilitator(paid)).register(
    LOCAL_NETWORK as `${string}:${string}`,
    new ExactEvmScheme(),
  );
  let runs = 0;
  const app = express();
  app.use(
    paymentMiddleware(
      {
        'GET /quote': {
          accepts: { scheme: 'exact', price, network: LOCAL_NETWORK as `${string}:${string}`, payTo },
          description: 'A quote (third-party seller)',
          mimeType: 'application/json',
        },
      },
      resourceServer,
    ),
  );
  app.get('/quote', (_req, res) => {
    runs++;
    res.json({ quote: 'paid knowledge', n: runs });
  });
  const server: Server = createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    runs: () => runs,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * A legacy x402 version 1 seller of `GET /v1/quote` for $0.001: the challenge is the 402's JSON body (`accepts` with
 * `maxAmountRequired` on `base-sepolia`), the payment comes in `X-PAYMENT`, verified and settled by the official
 * facilitator's version 1 `exact` scheme on the local chain; the receipt goes back in `X-PAYMENT-RESPONSE`.
 */
export async function startV1Seller(paid: PaidEnvironment, payTo: Address): Promise<OfficialSeller> {
  const facilitator = officialFacilitator(paid);
  let runs = 0;
  const server: Server = createServer((req, res) => {
    void answerV1(req, res, facilitator, { paid, payTo, url: `http://${req.headers.host}${req.url}` }).then((ran) => {
      if (ran) runs++;
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    runs: () => runs,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Answers one request of the version 1 seller; true when the paid route ran. */
async function answerV1(
  req: IncomingMessage,
  res: ServerResponse,
  facilitator: x402Facilitator,
  ctx: { paid: PaidEnvironment; payTo: Address; url: string },
): Promise<boolean> {
  const json = (status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
  const requirements = {
    scheme: 'exact',
    network: 'base-sepolia',
    maxAmountRequired: '1000',
    resource: ctx.url,
    description: 'A quote (legacy seller)',
    mimeType: 'application/json',
    payTo: ctx.payTo,
    maxTimeoutSeconds: 300,
    asset: ctx.paid.token,
    extra: { name: 'USDC', version: '2' },
  } as unknown as PaymentRequirements;
  const header = req.headers['x-payment'];
  if (typeof header !== 'string') {
    json(402, { x402Version: 1, error: 'X-PAYMENT header is required', accepts: [requirements] });
    return false;
  }
  const payload = JSON.parse(Buffer.from(header, 'base64').toString('utf8')) as PaymentPayload;
  const verified = await facilitator.verify(payload, requirements);
  if (!verified.isValid) {
    json(402, { x402Version: 1, error: verified.invalidReason, accepts: [requirements] });
    return false;
  }
  const settled = await facilitator.settle(payload, requirements);
  if (!settled.success) {
    json(402, { x402Version: 1, error: settled.errorReason, accepts: [requirements] });
    return false;
  }
  const receipt = Buffer.from(JSON.stringify(settled)).toString('base64');
  json(200, { quote: 'legacy knowledge' }, { 'x-payment-response': receipt });
  return true;
}
