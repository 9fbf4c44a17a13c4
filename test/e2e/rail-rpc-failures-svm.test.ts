import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import { afterAll, beforeAll, describe } from 'vitest';
import type { AnyToolDefinition } from '../../src/tool/tool.js';
import { annuity } from '../../tools/annuity.js';
import {
  LOCAL_SOLANA_NETWORK,
  signSvmPayment,
  startSolanaEnvironment,
  type SolanaEnvironment,
} from '../support/chain/solana-env.js';
import { countingTools } from '../support/paid.js';
import { encodePayment } from '../support/payer.js';
import { rpcFailureSuite, watchUnhandledRejections, type RailUnderTest } from '../support/rpc-failures.js';
import { decodeHeader, startTestServer, type TestServer } from '../support/server.js';
import { rpcMethods, startFlakyRpc, type FlakyRpc } from '../support/upstreams/flaky-rpc.js';

let sol: SolanaEnvironment;
let rpc: FlakyRpc;
let server: TestServer;
let runs: Map<string, number>;
const watch = watchUnhandledRejections();
const body = JSON.stringify({ payment: 100, ratePerPeriod: 0.05, periods: 10 });

beforeAll(async () => {
  sol = await startSolanaEnvironment(1);
  rpc = await startFlakyRpc(sol.rpc.url);
  const counted = countingTools([annuity] as AnyToolDefinition[]);
  runs = counted.runs;
  // The server reaches the ledger only through the flaky RPC; short timeouts keep the hangs quick.
  const env = {
    ...sol.env,
    NETWORKS_JSON: JSON.stringify({ networks: [{ ...sol.network, rpcUrl: rpc.url }] }),
    FACILITATOR_TIMEOUT_MS: '2000',
    FACILITATOR_SETTLE_TIMEOUT_MS: '4000',
  };
  server = await startTestServer(env, { tools: counted.tools });
}, 60_000);
afterAll(async () => {
  rpc?.heal();
  await server?.close();
  await rpc?.stop();
  await sol?.stop();
  watch.stop();
});

function rail(): RailUnderTest {
  const payer = sol.payers[0]!;
  return {
    rpc,
    url: server.url,
    price: 1000n,
    pay: async () => {
      const challenge = decodeHeader(
        (await fetch(server.url + '/api/annuity', { method: 'POST' })).headers.get('payment-required'),
      ) as PaymentRequired;
      // The payer's own client reads the ledger directly, not through the flaky RPC.
      return signSvmPayment(
        payer,
        challenge.accepts.find((a) => a.network === LOCAL_SOLANA_NETWORK)!,
        sol.rpc.url,
      );
    },
    send: (payment) =>
      fetch(server.url + '/api/annuity', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'payment-signature': encodePayment(payment as PaymentPayload) },
        body,
      }),
    balance: () => sol.balance(payer.address),
    runs: () => runs.get('annuity') ?? 0,
    submit: rpcMethods('sendTransaction'),
    confirm: rpcMethods('getSignatureStatuses'),
  };
}

describe('Solana exact through an RPC that fails', () => {
  rpcFailureSuite(rail, () => watch.seen);
});
