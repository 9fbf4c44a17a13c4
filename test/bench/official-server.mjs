/**
 * The official-middleware side of the paid comparison (`npm run bench:paid`), in its own process: express 5 with
 * `paymentMiddleware` from @x402/express, an `x402ResourceServer` talking to the facilitator over HTTP
 * (`HTTPFacilitatorClient`) and the official EVM `exact` server scheme, selling POST /api/annuity for the same
 * amount, asset, EIP-712 domain, pay-to and timeout as Tollbooth. The route does the same work as Tollbooth's
 * handler: the annuity tool's own input schema and handler from the build (dist/tools/annuity.js).
 *
 * With SCHEME=batch-settlement it sells the route with the official batch-settlement server scheme instead
 * (@x402/evm/batch-settlement/server, its InMemoryChannelStorage, RECEIVER_AUTHORIZER_KEY, WITHDRAW_DELAY): vouchers
 * are checked and charged here, deposits go to the facilitator.
 *
 * Environment: PORT, FACILITATOR_URL, NETWORK, ASSET, TOKEN_NAME, TOKEN_VERSION, PAY_TO, AMOUNT, MAX_TIMEOUT_SECONDS,
 * SCHEME (exact), RECEIVER_AUTHORIZER_KEY, WITHDRAW_DELAY.
 */
import express from 'express';
import { paymentMiddleware, x402ResourceServer } from '@x402/express';
import { HTTPFacilitatorClient } from '@x402/core/server';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import { annuity } from '../../dist/tools/annuity.js';

const env = process.env;
const network = env.NETWORK ?? 'eip155:84532';
const facilitator = new HTTPFacilitatorClient({ url: env.FACILITATOR_URL });
const scheme = env.SCHEME ?? 'exact';
// The batch scheme (and viem's accounts) load only when asked for, so the `exact` server's start-up figures stay those
// of the official middleware as users run it.
const serverScheme = scheme === 'batch-settlement' ? await batchScheme() : new ExactEvmScheme();

async function batchScheme() {
  const { BatchSettlementEvmScheme, InMemoryChannelStorage } = await import('@x402/evm/batch-settlement/server');
  const { privateKeyToAccount } = await import('viem/accounts');
  return new BatchSettlementEvmScheme(env.PAY_TO, {
    receiverAuthorizerSigner: privateKeyToAccount(env.RECEIVER_AUTHORIZER_KEY),
    withdrawDelay: Number(env.WITHDRAW_DELAY ?? 86_400),
    storage: new InMemoryChannelStorage(),
  });
}
const resourceServer = new x402ResourceServer(facilitator).register(network, serverScheme);

const routes = {
  'POST /api/annuity': {
    accepts: {
      scheme,
      network,
      payTo: env.PAY_TO,
      price: {
        amount: env.AMOUNT ?? '1000',
        asset: env.ASSET,
        extra: { name: env.TOKEN_NAME ?? 'USDC', version: env.TOKEN_VERSION ?? '2' },
      },
      maxTimeoutSeconds: Number(env.MAX_TIMEOUT_SECONDS ?? 300),
    },
    description: annuity.title,
    mimeType: 'application/json',
  },
};

/** What the annuity handler may use from its context (it uses none of it: a pure calculation). */
const ctx = { log: { info() {}, warn() {}, error() {} }, signal: new AbortController().signal, progress() {} };

const app = express();
app.use(express.json());
app.use(paymentMiddleware(routes, resourceServer));
app.post('/api/annuity', async (req, res) => {
  const input = annuity.input.parse(req.body);
  res.json(await annuity.handler(input, ctx));
});
app.use((err, _req, res, _next) => {
  res.status(err?.name === 'ZodError' ? 400 : 500).json({ error: String(err?.message ?? err) });
});
const server = app.listen(Number(env.PORT ?? 0), '127.0.0.1');
process.on('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections(); // idle keep-alive connections would hold the close (and a --cpu-prof profile) back
});
