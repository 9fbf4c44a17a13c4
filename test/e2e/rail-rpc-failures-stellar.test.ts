import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import { afterAll, beforeAll, describe } from 'vitest';
import type { AnyToolDefinition } from '../../src/tool/tool.js';
import { annuity } from '../../tools/annuity.js';
import { officialStellarPayment, startStellarEnvironment, type StellarEnvironment } from '../support/chain/stellar.js';
import { countingTools } from '../support/paid.js';
import { encodePayment } from '../support/payer.js';
import { rpcFailureSuite, watchUnhandledRejections, type RailUnderTest } from '../support/rpc-failures.js';
import { decodeHeader, startTestServer, type TestServer } from '../support/server.js';
import { rpcMethods, startFlakyRpc, type FlakyRpc } from '../support/upstreams/flaky-rpc.js';

let stellar: StellarEnvironment;
let rpc: FlakyRpc;
let server: TestServer;
let runs: Map<string, number>;
const watch = watchUnhandledRejections();
const body = JSON.stringify({ payment: 100, ratePerPeriod: 0.05, periods: 10 });

beforeAll(async () => {
  stellar = await startStellarEnvironment({ payers: 1 });
  rpc = await startFlakyRpc(stellar.rpc.url);
  const counted = countingTools([annuity] as AnyToolDefinition[]);
  runs = counted.runs;
  // Our facilitator reaches the network only through the flaky RPC; short timeouts keep the hangs quick.
  const env = {
    ...stellar.env,
    NETWORKS_JSON: JSON.stringify({ networks: [{ ...stellar.networkEntry, rpcUrl: rpc.url }] }),
    FACILITATOR_TIMEOUT_MS: '2000',
    FACILITATOR_SETTLE_TIMEOUT_MS: '4000',
  };
  server = await startTestServer(env, { tools: counted.tools });
}, 60_000);
afterAll(async () => {
  rpc?.heal();
  await server?.close();
  await rpc?.stop();
  await stellar?.stop();
  watch.stop();
});

function rail(): RailUnderTest {
  const payer = stellar.payers[0]!;
  return {
    rpc,
    url: server.url,
    price: 10_000n,
    pay: async () => {
      const res = await fetch(server.url + '/api/annuity', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      // The official client talks to the look-alike network directly, not through the flaky RPC.
      return officialStellarPayment(
        stellar,
        payer,
        decodeHeader(res.headers.get('payment-required')) as PaymentRequired,
      );
    },
    send: (payment) =>
      fetch(server.url + '/api/annuity', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'payment-signature': encodePayment(payment as PaymentPayload) },
        body,
      }),
    balance: async () => stellar.balance(payer.publicKey()),
    runs: () => runs.get('annuity') ?? 0,
    submit: rpcMethods('sendTransaction'),
    confirm: rpcMethods('getTransaction'),
  };
}

describe('Stellar exact through an RPC that fails', () => {
  rpcFailureSuite(rail, () => watch.seen);
});
