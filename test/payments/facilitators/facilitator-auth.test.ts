import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PaymentRequired, PaymentRequirements } from '@x402/core/types';
import type { Hex } from 'viem';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config/config.js';
import { createLogger, type Logger } from '../../../src/shared/log.js';
import { cdpJwt, parseCdpSecret } from '../../../src/providers/chain/cdp-auth.js';
import type { AnyToolDefinition } from '../../../src/tool/tool.js';
import { annuity } from '../../../tools/annuity.js';
import {
  CDP_FACILITATOR_PATH,
  generateCdpKey,
  startCdpLookalike,
  type TestCdpKey,
} from '../../support/cdp-facilitator.js';
import { startLookalikeFacilitator, type LookalikeFacilitator } from '../../support/facilitator.js';
import { LOCAL_NETWORK, startPaidEnvironment, type PaidEnvironment } from '../../support/paid.js';
import { PAY_TO_ENV } from '../../support/pay-to.js';
import { encodePayment, signExactPayment } from '../../support/payer.js';
import { decodeHeader, startTestServer, type TestServer } from '../../support/server.js';

const body = JSON.stringify({ payment: 100, ratePerPeriod: 0.05, periods: 10 });

let paid: PaidEnvironment;
/** The paid environment without its settlement key: Tollbooth must go to the remote facilitator. */
let remoteEnv: Record<string, string>;
let facilitatorKey: Hex;
const started: Array<{ close(): Promise<void> }> = [];

beforeAll(async () => {
  paid = await startPaidEnvironment(3);
  const { FACILITATOR_EVM_PRIVATE_KEY: key, ...rest } = paid.env;
  facilitatorKey = key as Hex;
  remoteEnv = { ...PAY_TO_ENV, ...rest };
}, 120_000);
afterEach(async () => {
  for (const s of started.splice(0).reverse()) await s.close();
});
afterAll(async () => {
  await paid?.stop();
});

/** A logger whose JSON lines the test reads (pino, as in production). */
function capturedLog(): { log: Logger; text: () => string } {
  const lines: string[] = [];
  return { log: createLogger('info', { write: (line: string) => void lines.push(line) }), text: () => lines.join('') };
}

async function lookalike(
  options: Partial<Parameters<typeof startLookalikeFacilitator>[0]> = {},
): Promise<LookalikeFacilitator> {
  const f = await startLookalikeFacilitator({
    rpcUrl: paid.chain.rpcUrl,
    chainId: paid.chain.chainId,
    privateKey: facilitatorKey,
    network: LOCAL_NETWORK,
    ...options,
  });
  started.push(f);
  return f;
}

async function cdpLookalike(key: TestCdpKey): Promise<LookalikeFacilitator> {
  const f = await startCdpLookalike(
    { rpcUrl: paid.chain.rpcUrl, chainId: paid.chain.chainId, privateKey: facilitatorKey, network: LOCAL_NETWORK },
    key,
  );
  started.push(f);
  return f;
}

async function server(env: Record<string, string>, log?: Logger): Promise<TestServer> {
  const s = await startTestServer(env, { tools: [annuity] as AnyToolDefinition[], ...(log ? { log } : {}) });
  started.push(s);
  return s;
}

/** The environment pointing EVM at a CDP facilitator on the look-alike's origin, signed with `key`. */
function cdpEnv(facilitator: LookalikeFacilitator, key: TestCdpKey): Record<string, string> {
  const origin = new URL(facilitator.url).origin;
  return {
    ...remoteEnv,
    FACILITATOR_URL_EVM: facilitator.url,
    CDP_API_URL: `${origin}/platform`,
    CDP_API_KEY_ID: key.keyId,
    CDP_API_KEY_SECRET: key.secret,
    FACILITATOR_EVM_ADDRESS: facilitator.address,
  };
}

async function challenge(s: TestServer): Promise<{ text: string; accepts: PaymentRequirements[] }> {
  const res = await fetch(s.url + '/api/annuity', { method: 'POST' });
  expect(res.status).toBe(402);
  const header = res.headers.get('payment-required');
  return { text: `${header} ${await res.text()}`, accepts: (decodeHeader(header) as PaymentRequired).accepts };
}

async function payOnLocalChain(s: TestServer, payer = paid.payers[0]!): Promise<Response> {
  const entry = (await challenge(s)).accepts.find((a) => a.network === LOCAL_NETWORK)!;
  const payment = await signExactPayment(payer, entry);
  return fetch(s.url + '/api/annuity', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'payment-signature': encodePayment(payment) },
    body,
  });
}

async function readyz(
  s: TestServer,
): Promise<{ status: number; text: string; checks: Record<string, Record<string, unknown>> }> {
  const res = await fetch(s.url + '/readyz');
  const text = await res.text();
  return {
    status: res.status,
    text,
    checks: (JSON.parse(text) as { checks: Record<string, Record<string, unknown>> }).checks,
  };
}

describe('the Coinbase Developer Platform facilitator (a look-alike that checks the JWT as CDP does)', () => {
  it('refuses a request that carries no JWT, or a JWT signed for another request, with 401', async () => {
    const key = generateCdpKey('ec');
    const facilitator = await cdpLookalike(key);
    expect(new URL(facilitator.url).pathname).toBe(CDP_FACILITATOR_PATH);
    expect((await fetch(`${facilitator.url}/supported`)).status).toBe(401);
    const credentials = { keyId: key.keyId, key: parseCdpSecret(key.secret) };
    const forSupported = cdpJwt(credentials, 'GET', `${facilitator.url}/supported`);
    const verify = await fetch(`${facilitator.url}/verify`, {
      method: 'POST',
      headers: { authorization: `Bearer ${forSupported}` },
      body: '{}',
    });
    expect(verify.status).toBe(401);
    expect(await verify.json()).toMatchObject({ errorMessage: 'token is not bound to this request' });
    expect(
      (await fetch(`${facilitator.url}/supported`, { headers: { authorization: `Bearer ${forSupported}` } })).status,
    ).toBe(200);
  });

  it('settles a paid call through it, each request signed with an ES256 JWT bound to its method and path', async () => {
    const key = generateCdpKey('ec');
    const facilitator = await cdpLookalike(key);
    const captured = capturedLog();
    const s = await server(cdpEnv(facilitator, key), captured.log);
    const before = await paid.balance(paid.payTo);
    const res = await payOnLocalChain(s);
    expect(res.status).toBe(200);
    expect(decodeHeader(res.headers.get('payment-response'))).toMatchObject({ success: true, network: LOCAL_NETWORK });
    expect((await paid.balance(paid.payTo)) - before).toBe(
      BigInt((await challenge(s)).accepts.find((a) => a.network === LOCAL_NETWORK)!.amount),
    );
    expect(facilitator.calls).toMatchObject({ verify: 1, settle: 1 });
    expect(facilitator.refused).toBe(0);
    const ready = await readyz(s);
    expect(ready.status).toBe(200);
    expect(ready.checks['facilitator:evm']).toMatchObject({ ok: true, mode: 'remote', facilitator: facilitator.url });
    expect(captured.text()).not.toContain(key.secret.split('\n')[1]!);
  });

  it('signs with an Ed25519 key (EdDSA) as well', async () => {
    const key = generateCdpKey('ed25519');
    const facilitator = await cdpLookalike(key);
    const s = await server(cdpEnv(facilitator, key));
    expect((await readyz(s)).status).toBe(200);
    expect(facilitator.refused).toBe(0);
    expect(facilitator.calls.supported).toBeGreaterThan(0);
  });

  it('with a key it does not know: /readyz names the facilitator that refused our credentials, a paid call charges nothing, and the secret shows nowhere', async () => {
    const facilitator = await cdpLookalike(generateCdpKey('ec'));
    const wrong = generateCdpKey('ec');
    const captured = capturedLog();
    const s = await server(cdpEnv(facilitator, wrong), captured.log);
    const ready = await readyz(s);
    expect(ready.status).toBe(503);
    expect(ready.checks['facilitator:evm']).toMatchObject({ ok: false, facilitator: facilitator.url });
    expect(ready.checks['facilitator:evm']!.error).toMatch(
      new RegExp(`^the facilitator ${facilitator.url} refused our credentials \\(HTTP 401 on supported\\)`),
    );
    const unpaid = await challenge(s);
    const before = await paid.balance(paid.payers[1]!.address);
    const res = await payOnLocalChain(s, paid.payers[1]);
    expect(res.status).toBe(502);
    const answer = await res.text();
    expect(await paid.balance(paid.payers[1]!.address)).toBe(before);
    expect(captured.text()).toMatch(/refused our credentials/);
    const secretLine = wrong.secret.split('\n')[1]!;
    for (const text of [captured.text(), ready.text, unpaid.text, answer]) {
      expect(text).not.toContain(secretLine);
      expect(text).not.toMatch(/Bearer ey/);
    }
  });

  it('cannot start without the CDP key: the configuration error says which settings are missing', () => {
    expect(() =>
      loadConfig({ ...remoteEnv, FACILITATOR_URL_EVM: 'https://api.cdp.coinbase.com/platform/v2/x402' }),
    ).toThrow(/CDP_API_KEY_ID and CDP_API_KEY_SECRET/);
  });
});

describe('FACILITATOR_HEADERS: static headers per facilitator URL', () => {
  const token = 'Bearer tb-test-token-0123456789abcdef';
  /** A facilitator that wants `token` and quotes whatever Authorization it got when it refuses. */
  const bearerLookalike = () =>
    lookalike({
      authorize: ({ headers }) =>
        headers.authorization === token ? undefined : `unknown token "${headers.authorization ?? ''}"`,
    });

  it('reaches the facilitator named, from the environment: a paid call settles through it', async () => {
    const facilitator = await bearerLookalike();
    const s = await server({
      ...remoteEnv,
      FACILITATOR_URL_EVM: facilitator.url,
      FACILITATOR_EVM_ADDRESS: facilitator.address,
      FACILITATOR_HEADERS: JSON.stringify({ [facilitator.url]: { Authorization: token } }),
    });
    expect((await readyz(s)).status).toBe(200);
    expect((await payOnLocalChain(s, paid.payers[2])).status).toBe(200);
    expect(facilitator.refused).toBe(0);
    expect(facilitator.calls).toMatchObject({ verify: 1, settle: 1 });
  });

  it('reaches the facilitator named, from a file (FACILITATOR_HEADERS_FILE)', async () => {
    const facilitator = await bearerLookalike();
    const dir = mkdtempSync(join(tmpdir(), 'tollbooth-headers-'));
    try {
      const file = join(dir, 'headers.json');
      writeFileSync(file, JSON.stringify({ [`${facilitator.url}/`]: { Authorization: token } }));
      const s = await server({
        ...remoteEnv,
        FACILITATOR_URL_EVM: facilitator.url,
        FACILITATOR_EVM_ADDRESS: facilitator.address,
        FACILITATOR_HEADERS_FILE: file,
      });
      expect((await readyz(s)).status).toBe(200);
      expect(facilitator.refused).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('with a wrong token: not ready, and the token never shows, even when the facilitator quotes it back', async () => {
    const facilitator = await bearerLookalike();
    const wrong = 'Bearer tb-wrong-token-fedcba9876543210';
    const captured = capturedLog();
    const s = await server(
      {
        ...remoteEnv,
        FACILITATOR_URL_EVM: facilitator.url,
        FACILITATOR_EVM_ADDRESS: facilitator.address,
        FACILITATOR_HEADERS: JSON.stringify({ [facilitator.url]: { Authorization: wrong } }),
      },
      captured.log,
    );
    const ready = await readyz(s);
    expect(ready.status).toBe(503);
    expect(ready.checks['facilitator:evm']!.error).toMatch(
      /refused our credentials \(HTTP 401 on supported\): unknown token "\[redacted\]"/,
    );
    for (const text of [captured.text(), ready.text, (await challenge(s)).text])
      expect(text).not.toContain('tb-wrong-token');
  });

  it('refuses a configuration naming a facilitator that is not configured, or a broken header, without quoting a value', () => {
    const base = { ...remoteEnv, FACILITATOR_URL_EVM: 'https://facilitator.example/x402' };
    expect(() =>
      loadConfig({
        ...base,
        FACILITATOR_HEADERS: JSON.stringify({ 'https://other.example/x402': { Authorization: 'Bearer s3cr3t-value' } }),
      }),
    ).toThrow(/FACILITATOR_HEADERS names https:\/\/other\.example\/x402, which is not a configured facilitator URL/);
    for (const headers of [
      '{"https://facilitator.example/x402": {"Authorization": "Bearer s3cr3t-value\\r\\nX: y"}}',
      '{not json s3cr3t-value',
      '{"https://facilitator.example/x402": "s3cr3t-value"}',
    ]) {
      let error: unknown;
      try {
        loadConfig({ ...base, FACILITATOR_HEADERS: headers });
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toMatch(/FACILITATOR_HEADERS/);
      expect((error as Error).message).not.toContain('s3cr3t');
    }
  });
});

describe('FACILITATOR_UNSUPPORTED: only what the facilitator lists in /supported is advertised', () => {
  it('drops the other options with a warning naming them (the default); /readyz is ready and lists them as dropped', async () => {
    const facilitator = await lookalike();
    const captured = capturedLog();
    const s = await server(
      { ...remoteEnv, FACILITATOR_URL_EVM: facilitator.url, FACILITATOR_EVM_ADDRESS: facilitator.address },
      captured.log,
    );
    const { accepts } = await challenge(s);
    // EVM keeps the one option the facilitator lists; the families without a facilitator are not compared.
    expect(accepts.filter((a) => a.network.startsWith('eip155:')).map((a) => `${a.scheme} ${a.network}`)).toEqual([
      `exact ${LOCAL_NETWORK}`,
    ]);
    const warning = captured
      .text()
      .split('\n')
      .find((line) => line.includes('payment options dropped'));
    expect(JSON.parse(warning!)).toMatchObject({
      level: 'warn',
      family: 'evm',
      facilitator: facilitator.url,
      options: expect.arrayContaining(['exact on eip155:137', 'upto on eip155:8453', 'exact on base (x402 v1)']),
    });
    const ready = await readyz(s);
    expect(ready.status).toBe(200);
    expect(ready.checks['facilitator:evm']).toMatchObject({
      ok: true,
      dropped: expect.arrayContaining(['exact on eip155:8453']),
    });
  });

  it('answers a payment for a dropped option as not advertised (402), never a "retry shortly" 502', async () => {
    const facilitator = await lookalike();
    const s = await server({
      ...remoteEnv,
      FACILITATOR_URL_EVM: facilitator.url,
      FACILITATOR_EVM_ADDRESS: facilitator.address,
    });
    const baseEntry = {
      scheme: 'exact',
      network: 'eip155:8453',
      asset: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
      amount: '1000',
      payTo: remoteEnv.PAY_TO_EVM!,
      maxTimeoutSeconds: 300,
      extra: { name: 'USD Coin', version: '2' },
    } as PaymentRequirements;
    const payment = await signExactPayment(paid.payers[0]!, baseEntry);
    const res = await fetch(s.url + '/api/annuity', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'payment-signature': encodePayment(payment) },
      body,
    });
    expect(res.status).toBe(402);
    expect(facilitator.calls.verify).toBe(0);
  });

  it('accepts drop (the default) or refuse, nothing else', () => {
    expect(loadConfig({}).facilitator.unsupported).toBe('drop');
    expect(loadConfig({ FACILITATOR_UNSUPPORTED: 'refuse' }).facilitator.unsupported).toBe('refuse');
    expect(() => loadConfig({ FACILITATOR_UNSUPPORTED: 'ignore' })).toThrow(
      /must be drop or refuse[\s\S]*FACILITATOR_UNSUPPORTED/,
    );
  });

  it('refuses to start with FACILITATOR_UNSUPPORTED=refuse, naming the options', async () => {
    const facilitator = await lookalike();
    await expect(
      server({
        ...remoteEnv,
        FACILITATOR_URL_EVM: facilitator.url,
        FACILITATOR_EVM_ADDRESS: facilitator.address,
        FACILITATOR_UNSUPPORTED: 'refuse',
      }),
    ).rejects.toThrow(
      /FACILITATOR_UNSUPPORTED=refuse: .*\n- evm: the facilitator http:\/\/127\.0\.0\.1:\d+ cannot settle exact on eip155:8453/,
    );
  });

  it('starts with FACILITATOR_UNSUPPORTED=refuse when the facilitator lists every advertised option', async () => {
    // The table's one network is Base Sepolia, whose transfers-evm option is version 1 under its short name.
    const kinds = [
      { x402Version: 1, scheme: 'exact', network: 'base-sepolia' },
      { x402Version: 2, scheme: 'exact', network: LOCAL_NETWORK },
    ];
    const facilitator = await lookalike({ kinds });
    const onlyLocal = JSON.stringify({ replace: true, networks: [JSON.parse(remoteEnv.NETWORKS_JSON!).networks[0]] });
    const s = await server({
      ...remoteEnv,
      NETWORKS_JSON: onlyLocal,
      FACILITATOR_URL_EVM: facilitator.url,
      FACILITATOR_EVM_ADDRESS: facilitator.address,
      FACILITATOR_UNSUPPORTED: 'refuse',
    });
    expect((await readyz(s)).status).toBe(200);
    // The facilitator stops listing it later: /readyz says so (the option is still advertised).
    kinds.pop();
    const ready = await readyz(s);
    expect(ready.status).toBe(503);
    expect(ready.checks['facilitator:evm']).toMatchObject({ ok: false, unsupported: [`exact on ${LOCAL_NETWORK}`] });
  });

  it('in-process: drops what the rails cannot settle (an EVM network without an RPC URL)', async () => {
    const captured = capturedLog();
    const extra = {
      id: 'eip155:999',
      family: 'evm',
      asset: '0x0000000000000000000000000000000000000999',
      decimals: 6,
      name: 'USDC',
      version: '2',
      label: 'No RPC',
    };
    const networks = JSON.parse(paid.env.NETWORKS_JSON!).networks as unknown[];
    const s = await server(
      { ...PAY_TO_ENV, ...paid.env, NETWORKS_JSON: JSON.stringify({ networks: [...networks, extra] }) },
      captured.log,
    );
    const { accepts } = await challenge(s);
    expect(accepts.map((a) => a.network)).toContain(LOCAL_NETWORK);
    expect(accepts.map((a) => a.network)).not.toContain('eip155:999');
    expect(captured.text()).toMatch(/"options":\["exact on eip155:999"\]/);
  });
});
