import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import { afterAll, beforeAll, describe } from 'vitest';
import type { AnyToolDefinition } from '../../src/tool/tool.js';
import { annuity } from '../../tools/annuity.js';
import { startAlgorandEnvironment, type AlgorandEnvironment } from '../support/chain/algorand.js';
import { officialAlgorandPayment } from '../support/chain/algorand-payer.js';
import { countingTools } from '../support/paid.js';
import { encodePayment } from '../support/payer.js';
import { rpcFailureSuite, watchUnhandledRejections, type RailUnderTest } from '../support/rpc-failures.js';
import { decodeHeader, startTestServer, type TestServer } from '../support/server.js';
import { restPaths, startFlakyRpc, type FlakyRpc } from '../support/upstreams/flaky-rpc.js';

let algo: AlgorandEnvironment;
let rpc: FlakyRpc;
let server: TestServer;
let runs: Map<string, number>;
const watch = watchUnhandledRejections();
const body = JSON.stringify({ payment: 100, ratePerPeriod: 0.05, periods: 10 });

beforeAll(async () => {
  algo = await startAlgorandEnvironment(1);
  rpc = await startFlakyRpc(algo.algod.url);
  const counted = countingTools([annuity] as AnyToolDefinition[]);
  runs = counted.runs;
  // The facilitator reaches algod only through the flaky proxy; short timeouts keep the hangs quick.
  const [entry] = (JSON.parse(algo.env.NETWORKS_JSON!) as { networks: Array<Record<string, unknown>> }).networks;
  const env = {
    ...algo.env,
    NETWORKS_JSON: JSON.stringify({ networks: [{ ...entry, rpcUrl: rpc.url }] }),
    FACILITATOR_TIMEOUT_MS: '2000',
    FACILITATOR_SETTLE_TIMEOUT_MS: '4000',
  };
  server = await startTestServer(env, { tools: counted.tools });
}, 60_000);
afterAll(async () => {
  rpc?.heal();
  await server?.close();
  await rpc?.stop();
  await algo?.stop();
  watch.stop();
});

function rail(): RailUnderTest {
  const payer = algo.payers[0]!;
  return {
    rpc,
    url: server.url,
    price: 1000n,
    pay: async () => {
      const res = await fetch(server.url + '/api/annuity', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      // The official client reads algod directly, not through the flaky proxy.
      return officialAlgorandPayment(
        payer,
        decodeHeader(res.headers.get('payment-required')) as PaymentRequired,
        algo.network,
        algo.algod.url,
      );
    },
    send: (payment) =>
      fetch(server.url + '/api/annuity', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'payment-signature': encodePayment(payment as PaymentPayload) },
        body,
      }),
    balance: async () => algo.balance(payer.addr.toString()),
    runs: () => runs.get('annuity') ?? 0,
    submit: (req) => req.httpMethod === 'POST' && req.path === '/v2/transactions',
    confirm: restPaths('/v2/transactions/pending', '/v2/status'),
  };
}

describe('Algorand exact through an algod that fails', () => {
  rpcFailureSuite(rail, () => watch.seen);
});
