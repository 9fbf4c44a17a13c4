import type { PaymentRequired } from '@x402/core/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnyToolDefinition } from '../../../src/tool/tool.js';
import { annuity } from '../../../tools/annuity.js';
import { lookalikeFor, type LookalikeOptions } from '../../support/facilitator.js';
import { LOCAL_NETWORK, startPaidEnvironment, type PaidEnvironment } from '../../support/paid.js';
import { encodePayment, signExactPayment } from '../../support/payer.js';
import { decodeHeader, startTestServer, type TestServer } from '../../support/server.js';

const body = JSON.stringify({ payment: 100, ratePerPeriod: 0.05, periods: 10 });

let paid: PaidEnvironment;
beforeAll(async () => {
  paid = await startPaidEnvironment(1);
}, 120_000);
afterAll(async () => {
  await paid?.stop();
});

async function paidCall(server: TestServer): Promise<number> {
  const probe = await fetch(server.url + '/api/annuity', { method: 'POST' });
  const challenge = decodeHeader(probe.headers.get('payment-required')) as PaymentRequired;
  const entry = challenge.accepts.find((a) => a.network === LOCAL_NETWORK)!;
  const payment = encodePayment(await signExactPayment(paid.payers[0]!, entry));
  const res = await fetch(server.url + '/api/annuity', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'payment-signature': payment },
    body,
  });
  await res.arrayBuffer();
  return res.status;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const cases: Array<[string, Partial<LookalikeOptions>]> = [
  ['announces Keep-Alive: timeout=1 and closes after it', { keepAliveMs: 1000 }],
  ['closes idle connections after 1 s without announcing it', { idleCloseMs: 1000 }],
];

describe('paid calls through a facilitator with a short keep-alive', () => {
  for (const [label, options] of cases) {
    it(`all succeed, before and after its connections were closed, when it ${label}`, async () => {
      const { facilitator, serverEnv } = await lookalikeFor(paid, LOCAL_NETWORK, options);
      const server = await startTestServer(serverEnv, { tools: [annuity] as AnyToolDefinition[] });
      try {
        const statuses: number[] = [];
        for (let round = 0; round < 3; round++) {
          statuses.push(...(await Promise.all([1, 2, 3, 4].map(() => paidCall(server)))));
          await sleep(1500); // past the facilitator's keep-alive: it has closed every connection
        }
        expect(statuses).toEqual(Array(12).fill(200));
        expect(facilitator.calls).toMatchObject({ verify: 12, settle: 12 });
        const receipts = await server.runtime.store.ledger.listReceipts();
        expect(receipts.filter((r) => r.status === 'settled' && r.transaction)).toHaveLength(12);
      } finally {
        await server.close();
        await facilitator.close();
      }
    });
  }
});
