import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PaymentRequired } from '@x402/core/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/shared/log.js';
import { connectHttpClient, CLI_PATH } from '../support/mcp.js';
import { LOCAL_NETWORK, startPaidEnvironment, type PaidEnvironment } from '../support/paid.js';
import { encodePayment, signExactPayment } from '../support/payer.js';
import { decodeHeader, startTestServer, type TestServer } from '../support/server.js';
import { spawnServe, type SpawnedServer } from '../support/spawn.js';
import { PANEL_KEY, startSmmPanelLookalike, type SmmPanelLookalike } from '../support/upstreams/smm-panel.js';

const PASSWORD = 'Tr0ub4dor&3-very-secret-passphrase';
const CARD = '4111 1111 1111 1111';
const DIGITS = CARD.replace(/\s/g, '');
const METRICS_TOKEN = 'metrics-token-that-must-stay-secret';
const DB_PASSWORD = 'Db-Pa55word-never-logged';
const lines: string[] = [];
const capture = createLogger('info', { write: (line: string) => void lines.push(line) });

let paid: PaidEnvironment;
let server: TestServer;
beforeAll(async () => {
  paid = await startPaidEnvironment(2);
  server = await startTestServer({ ...paid.env, LOG_LEVEL: 'info' }, { log: capture });
}, 120_000);
afterAll(async () => {
  await server?.close();
  await paid?.stop();
});

/** Every secret of the runs below, as it could appear in a log line (with and without 0x, spaces or encoding). */
function secrets(extra: string[] = []): string[] {
  // The facilitator's settlement key and every payer's key come from the local chain's accounts.
  const keys = [paid.env.FACILITATOR_EVM_PRIVATE_KEY!, ...paid.chain.accounts.map((a) => a.privateKey)];
  return [PASSWORD, CARD, DIGITS, ...keys, ...keys.map((k) => k.replace(/^0x/, '')), ...extra];
}

async function paidCall(url: string, path: string, body: unknown, payerIndex = 0) {
  const probe = await fetch(url + path, { method: 'POST' });
  const challenge = decodeHeader(probe.headers.get('payment-required')) as PaymentRequired;
  const entry = challenge.accepts.find((a) => a.network === LOCAL_NETWORK)!;
  const payment = encodePayment(await signExactPayment(paid.payers[payerIndex]!, entry));
  const res = await fetch(url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'payment-signature': payment },
    body: JSON.stringify(body),
  });
  return { res, payment };
}

describe('secrets stay secret', () => {
  it('never writes a password or a card number to the logs or the store, and logs one line per paid call', async () => {
    expect((await paidCall(server.url, '/api/password-strength', { password: PASSWORD })).res.status).toBe(200);
    expect((await paidCall(server.url, '/api/card-validate', { number: CARD })).res.status).toBe(200);
    expect((await paidCall(server.url, '/api/card-validate', { number: `${CARD} x` })).res.status).toBe(400);
    expect(
      (
        await fetch(server.url + '/api/password-strength', {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: `{"password":"${PASSWORD}",`,
        })
      ).status,
    ).toBe(400);

    const logs = lines.join('');
    for (const secret of secrets()) expect(logs).not.toContain(secret);
    for (const file of readdirSync(server.dataDir)) {
      const bytes = readFileSync(join(server.dataDir, file)).toString('latin1');
      expect(bytes, file).not.toContain(PASSWORD);
      expect(bytes, file).not.toContain(DIGITS);
    }
    expect(await server.runtime.store.ledger.listReceipts()).toHaveLength(2);

    const calls = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.msg === 'paid call');
    const payer = paid.payers[0]!.address;
    // Two settled calls and one invalid card number; the three probes (402) carried no payment and are not logged,
    // and the unparseable body never reaches the pipeline.
    expect(calls.map((c) => `${c.tool} ${c.outcome}`)).toEqual([
      'password-strength settled',
      'card-validate settled',
      'card-validate error',
    ]);
    expect(calls[0]).toMatchObject({
      level: 'info',
      transport: 'http',
      network: LOCAL_NETWORK,
      amount: '1000',
      payer,
      transaction: expect.stringMatching(/^0x/),
    });
    for (const stage of ['verifyMs', 'handlerMs', 'settleMs', 'totalMs'])
      expect(calls[0]![stage]).toEqual(expect.any(Number));
    expect(calls[2]).toMatchObject({ outcome: 'error', reason: 'invalid_input' });
    for (const call of calls) expect(Object.keys(call)).not.toContain('input');
  });
});

describe('the logs of a whole run of the built server', () => {
  let panel: SmmPanelLookalike;
  let spawned: SpawnedServer | undefined;
  afterAll(async () => {
    await spawned?.stop();
    await panel?.stop();
  });

  it('carry no key, password, card number, token, panel key or signed payment', async () => {
    panel = await startSmmPanelLookalike();
    spawned = await spawnServe({
      ...paid.env,
      LOG_LEVEL: 'info',
      METRICS_TOKEN,
      SMM_PANEL_URL: `${panel.url}/api/v2`,
      SMM_PANEL_KEY: PANEL_KEY,
    });
    const url = spawned.url;
    const signed: string[] = [];
    for (const [path, body, status] of [
      ['/api/password-strength', { password: PASSWORD }, 200],
      ['/api/card-validate', { number: CARD }, 200],
      ['/api/card-validate', { number: `${CARD} x` }, 400],
    ] as const) {
      const { res, payment } = await paidCall(url, path, body, 1);
      expect(res.status).toBe(status);
      signed.push(payment);
    }
    const mcp = await connectHttpClient(url);
    const unpaid = await mcp.callTool({ name: 'password-strength', arguments: { password: PASSWORD } });
    const entry = (unpaid.structuredContent as unknown as PaymentRequired).accepts.find(
      (a) => a.network === LOCAL_NETWORK,
    )!;
    const payment = await signExactPayment(paid.payers[1]!, entry);
    expect(
      (
        await mcp.callTool({
          name: 'password-strength',
          arguments: { password: PASSWORD },
          _meta: { 'x402/payment': payment },
        })
      ).isError,
    ).toBeFalsy();
    await mcp.close();
    panel.failNext('500', 3);
    expect((await fetch(`${url}/v1/smm-quote?serviceId=1&quantity=1000`)).status).toBe(502);
    expect((await fetch(`${url}/v1/smm-quote?serviceId=1&quantity=1000`)).status).toBe(200);
    expect((await fetch(url + '/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).status).toBe(200);
    expect(
      (await fetch(url + '/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}-wrong` } })).status,
    ).toBe(401);

    spawned.child.kill('SIGTERM');
    expect(await spawned.exited).toBe(0);
    const logs = spawned.stderr();
    const signature = (payment.payload as { signature: string }).signature;
    for (const secret of secrets([METRICS_TOKEN, PANEL_KEY, signature, ...signed])) expect(logs).not.toContain(secret);
    expect(spawned.logs().filter((l) => l.msg === 'paid call' && l.outcome === 'settled')).toHaveLength(3);
    expect(logs).toContain('upstream attempt failed');
  });

  it('never shows the DATABASE_URL password, also when the database cannot be reached at start-up', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tollbooth-dburl-'));
    try {
      const env = {
        PATH: process.env.PATH ?? '',
        DATA_DIR: dataDir,
        PORT: '0',
        DATABASE_URL: `postgres://tollbooth:${DB_PASSWORD}@127.0.0.1:1/tollbooth`,
      };
      for (const command of ['serve', 'receipts']) {
        const run = spawnSync(process.execPath, [CLI_PATH, command], { env, encoding: 'utf8', timeout: 60_000 });
        expect(run.status, command).not.toBe(0);
        expect(run.stderr, command).toContain('127.0.0.1');
        expect(run.stderr + run.stdout, command).not.toContain(DB_PASSWORD);
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
