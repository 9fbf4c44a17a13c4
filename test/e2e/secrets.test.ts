import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PaymentRequired } from '@x402/core/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Logger } from '../../src/log.js';
import { LOCAL_NETWORK, startPaidEnvironment, type PaidEnvironment } from '../support/paid.js';
import { encodePayment, signExactPayment } from '../support/payer.js';
import { decodeHeader, startTestServer, type TestServer } from '../support/server.js';

const PASSWORD = 'Tr0ub4dor&3-very-secret-passphrase';
const CARD = '4111 1111 1111 1111';
const lines: string[] = [];
const capture: Logger = {
  info: (msg, fields) => void lines.push(JSON.stringify({ msg, ...fields })),
  warn: (msg, fields) => void lines.push(JSON.stringify({ msg, ...fields })),
  error: (msg, fields) => void lines.push(JSON.stringify({ msg, ...fields })),
};

let paid: PaidEnvironment;
let server: TestServer;
beforeAll(async () => {
  paid = await startPaidEnvironment(1);
  server = await startTestServer({ ...paid.env, LOG_LEVEL: 'info' }, { log: capture });
}, 120_000);
afterAll(async () => {
  await server?.close();
  await paid?.stop();
});

async function paidCall(path: string, body: unknown) {
  const probe = await fetch(server.url + path, { method: 'POST' });
  const challenge = decodeHeader(probe.headers.get('payment-required')) as PaymentRequired;
  const entry = challenge.accepts.find((a) => a.network === LOCAL_NETWORK)!;
  const payment = encodePayment(await signExactPayment(paid.payers[0]!, entry));
  return fetch(server.url + path, { method: 'POST', headers: { 'content-type': 'application/json', 'payment-signature': payment }, body: JSON.stringify(body) });
}

describe('secrets stay secret', () => {
  it('never writes a password or a card number to the logs or the store', async () => {
    expect((await paidCall('/api/password-strength', { password: PASSWORD })).status).toBe(200);
    expect((await paidCall('/api/card-validate', { number: CARD })).status).toBe(200);
    expect((await paidCall('/api/card-validate', { number: `${CARD} x` })).status).toBe(400);
    expect((await fetch(server.url + '/api/password-strength', { method: 'POST', headers: { 'content-type': 'application/json' }, body: `{"password":"${PASSWORD}",` })).status).toBe(400);

    const logs = lines.join('\n');
    const digits = CARD.replace(/\s/g, '');
    expect(logs).not.toContain(PASSWORD);
    expect(logs).not.toContain(digits);
    expect(logs).not.toContain(CARD);
    for (const file of readdirSync(server.dataDir)) {
      const bytes = readFileSync(join(server.dataDir, file)).toString('latin1');
      expect(bytes, file).not.toContain(PASSWORD);
      expect(bytes, file).not.toContain(digits);
    }
    expect(await server.runtime.store.listReceipts()).toHaveLength(2);
  });
});
