import type { PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { Challenge, evm as mppEvm } from 'mppx';
import type { Hex } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnyToolDefinition } from '../../src/tool/tool.js';
import { annuity } from '../../tools/annuity.js';
import { cardValidate } from '../../tools/card-validate.js';
import { developmentIndicator } from '../../tools/development-indicator.js';
import { geoDistance } from '../../tools/geo-distance.js';
import {
  decodeCredentialValue,
  decodeReceipt,
  encodeRequest,
  mppClient,
  signCredential,
  tampered,
  wireRequest,
} from '../support/mpp.js';
import { countingTools, LOCAL_NETWORK, startPaidEnvironment, type PaidEnvironment } from '../support/paid.js';
import { encodePayment, officialPayment } from '../support/payer.js';
import { decodeHeader, startTestServer, type TestServer } from '../support/server.js';

const SECRET = 'mpp-e2e-secret-key-of-at-least-32-bytes!';
const REALM = 'tollbooth.test';
let paid: PaidEnvironment;
let server: TestServer;
let runs: Map<string, number>;

const calls = {
  annuity: { path: '/api/annuity', body: { payment: 100, ratePerPeriod: 0.05, periods: 10 } },
  'card-validate': { path: '/api/card-validate', body: { number: '4242 4242 4242 4242' } },
  'geo-distance': {
    path: '/api/geo-distance',
    body: { from: { lat: 51.5074, lng: -0.1278 }, to: { lat: 48.8566, lng: 2.3522 } },
  },
} as const;
type Name = keyof typeof calls;

const post = (name: Name, headers: Record<string, string> = {}): RequestInit => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', ...headers },
  body: JSON.stringify(calls[name].body),
});
const url = (name: Name) => server.url + calls[name].path;
const handlerRuns = (name: Name) => runs.get(name) ?? 0;

beforeAll(async () => {
  paid = await startPaidEnvironment(8);
  const counted = countingTools([annuity, cardValidate, geoDistance, developmentIndicator] as AnyToolDefinition[]);
  runs = counted.runs;
  server = await startTestServer({ ...paid.env, MPP_SECRET_KEY: SECRET, MPP_REALM: REALM }, { tools: counted.tools });
}, 120_000);
afterAll(async () => {
  await server?.close();
  await paid?.stop();
});

/** The x402 entry of the local chain for a route, from its bare probe. */
async function localEntry(name: Name): Promise<{ challenge: PaymentRequired; entry: PaymentRequirements }> {
  const res = await fetch(url(name), { method: 'POST' });
  const challenge = decodeHeader(res.headers.get('payment-required')) as PaymentRequired;
  return { challenge, entry: challenge.accepts.find((a) => a.network === LOCAL_NETWORK && a.scheme === 'exact')! };
}

/** The x402 payment carrying the same EIP-3009 authorization as an MPP credential. */
async function asX402(credential: string, name: Name): Promise<string> {
  const { payload } = decodeCredentialValue(credential);
  const { entry } = await localEntry(name);
  const { signature, type: _type, ...authorization } = payload;
  return encodePayment({ x402Version: 2, accepted: entry, payload: { signature, authorization } });
}

describe('a bare probe of a paid route', () => {
  it('answers 402 with the x402 challenge and an MPP evm/charge challenge for each EVM EIP-3009 option, at the same price and pay-to', async () => {
    const res = await fetch(url('annuity'), { method: 'POST' });
    expect(res.status).toBe(402);
    const x402 = decodeHeader(res.headers.get('payment-required')) as PaymentRequired;
    expect(await res.json()).toEqual(x402);
    const offered = Challenge.fromResponseList(res);
    const evmExact = x402.accepts.filter((a) => a.network.startsWith('eip155:') && a.scheme === 'exact');
    expect(offered).toHaveLength(evmExact.length);
    for (const [i, challenge] of offered.entries()) {
      const entry = evmExact[i]!;
      expect(challenge).toMatchObject({ method: 'evm', intent: 'charge', realm: REALM });
      expect(challenge.request).toEqual({
        amount: entry.amount,
        currency: entry.asset,
        recipient: entry.payTo,
        methodDetails: {
          chainId: Number(entry.network.split(':')[1]),
          credentialTypes: ['authorization'],
          decimals: 6,
        },
      });
      expect(Date.parse(challenge.expires!)).toBeGreaterThan(Date.now());
      expect(Challenge.verify(challenge, { secretKey: SECRET })).toBe(true);
    }
  });

  it('answers a HEAD probe of a GET route with the MPP challenges too, and refuses a HEAD carrying a credential (HEAD never runs a call)', async () => {
    const head = await fetch(`${server.url}${developmentIndicator.path}`, { method: 'HEAD' });
    expect(head.status).toBe(402);
    expect(Challenge.fromResponseList(head).length).toBeGreaterThan(0);
    const credential = await signCredential(paid.payers[6]!, url('annuity'), post('annuity'));
    expect(
      (
        await fetch(`${server.url}${developmentIndicator.path}`, {
          method: 'HEAD',
          headers: { authorization: credential },
        })
      ).status,
    ).toBe(405);
  });

  it('lets browsers send the credential and read the challenges and the receipt (CORS)', async () => {
    const probe = await fetch(url('annuity'), { method: 'OPTIONS' });
    expect(probe.headers.get('access-control-allow-headers')).toMatch(/Authorization/);
    expect(probe.headers.get('access-control-expose-headers')).toMatch(/WWW-Authenticate, Payment-Receipt/);
  });

  it('issues a new challenge id every time (the EIP-3009 nonce derives from it, so it must never repeat)', async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 3; i++)
      for (const c of Challenge.fromResponseList(await fetch(url('annuity'), { method: 'POST' }))) ids.add(c.id);
    expect(ids.size).toBe(3 * Challenge.fromResponseList(await fetch(url('annuity'), { method: 'POST' })).length);
  });
});

describe('the official mppx client paying over HTTP on a local chain', () => {
  it('pays three different tools: each runs once, each moves exactly its price, each receipt decodes with mppx', async () => {
    const payer = paid.payers[0]!;
    const client = mppClient(payer);
    for (const name of ['annuity', 'card-validate', 'geo-distance'] as const) {
      const before = {
        payer: await paid.balance(payer.address),
        payTo: await paid.balance(paid.payTo),
        runs: handlerRuns(name),
      };
      const res = await client.fetch(url(name), post(name));
      expect(res.status).toBe(200);
      const receipt = decodeReceipt(res);
      expect(receipt).toMatchObject({ method: 'evm', status: 'success' });
      expect(receipt.reference).toMatch(/^0x[0-9a-f]{64}$/);
      expect(res.headers.get('payment-response')).toBeNull();
      expect(await paid.balance(payer.address)).toBe(before.payer - 1000n);
      expect(await paid.balance(paid.payTo)).toBe(before.payTo + 1000n);
      expect(handlerRuns(name)).toBe(before.runs + 1);
      const [stored] = await server.runtime.store.ledger.listReceipts({ limit: 1 });
      expect(stored).toMatchObject({
        tool: name,
        status: 'settled',
        transaction: receipt.reference,
        amount: '1000',
        transport: 'http',
        protocol: 'mpp',
        payer: payer.address,
      });
    }
  });

  it('serves an x402-only client and an MPP-only client on the same route, and records each protocol', async () => {
    const { challenge } = await localEntry('annuity');
    const x402 = await fetch(
      url('annuity'),
      post('annuity', {
        'payment-signature': encodePayment(await officialPayment(paid.payers[1]!, challenge, LOCAL_NETWORK)),
      }),
    );
    expect(x402.status).toBe(200);
    expect(x402.headers.get('payment-response')).not.toBeNull();
    expect(x402.headers.get('payment-receipt')).toBeNull();
    const mpp = await mppClient(paid.payers[1]!).fetch(url('annuity'), post('annuity'));
    expect(mpp.status).toBe(200);
    expect(decodeReceipt(mpp).status).toBe('success');
    const protocols = (await server.runtime.store.ledger.listReceipts({ limit: 2 })).map((r) => r.protocol);
    expect(protocols).toEqual(['mpp', 'x402']);
  });

  it('refuses a request carrying both an MPP credential and an x402 payment with a clear 400, running nothing', async () => {
    const credential = await signCredential(paid.payers[2]!, url('annuity'), post('annuity'));
    const before = handlerRuns('annuity');
    const res = await fetch(
      url('annuity'),
      post('annuity', { authorization: credential, 'payment-signature': await asX402(credential, 'annuity') }),
    );
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    const problem = (await res.json()) as { type: string; detail: string; reason: string };
    expect(problem).toMatchObject({
      type: 'https://paymentauth.org/problems/bad-request',
      reason: 'mpp_and_x402_together',
    });
    expect(problem.detail).toMatch(/exactly one/);
    expect(handlerRuns('annuity')).toBe(before);
  });
});

describe('one EIP-3009 authorization offered through both protocols over HTTP', () => {
  it('buys one execution whether it comes first through MPP or first through x402', async () => {
    for (const mppFirst of [true, false]) {
      const payer = paid.payers[3]!;
      const credential = await signCredential(payer, url('annuity'), post('annuity'));
      const x402 = await asX402(credential, 'annuity');
      const before = { runs: handlerRuns('annuity'), balance: await paid.balance(payer.address) };
      const viaMpp = () => fetch(url('annuity'), post('annuity', { authorization: credential }));
      const viaX402 = () => fetch(url('annuity'), post('annuity', { 'payment-signature': x402 }));
      const first = await (mppFirst ? viaMpp() : viaX402());
      expect(first.status).toBe(200);
      const second = await (mppFirst ? viaX402() : viaMpp());
      expect(second.status).toBe(402);
      expect(handlerRuns('annuity')).toBe(before.runs + 1);
      expect(await paid.balance(payer.address)).toBe(before.balance - 1000n);
    }
  });
});

/** Signs an evm/charge credential by hand (for challenges the mppx client would refuse to pay, such as expired ones). */
async function handSigned(challenge: Challenge.Challenge, name: Name): Promise<string> {
  const payer = paid.payers[4]!;
  const request = challenge.request as {
    amount: string;
    currency: Hex;
    recipient: Hex;
    methodDetails: { chainId: number };
  };
  const message = {
    from: payer.address,
    to: request.recipient,
    value: BigInt(request.amount),
    validAfter: 0n,
    validBefore: BigInt(Math.floor(Date.now() / 1000) + 300),
    nonce: mppEvm.Types.challengeHash(challenge) as Hex,
  };
  const signature = await payer.signTypedData({
    domain: { name: 'USDC', version: '2', chainId: request.methodDetails.chainId, verifyingContract: request.currency },
    types: mppEvm.Types.authorizationTypes,
    primaryType: 'TransferWithAuthorization',
    message,
  });
  void name;
  const payload = {
    type: 'authorization',
    from: message.from,
    to: message.to,
    value: request.amount,
    validAfter: '0',
    validBefore: String(message.validBefore),
    nonce: message.nonce,
    signature,
  };
  const { meta: _meta, ...wire } = challenge;
  return `Payment ${Buffer.from(JSON.stringify({ challenge: { ...wire, request: encodeRequest(challenge.request) }, payload }), 'utf8').toString('base64url')}`;
}

describe('tampered or misdirected MPP credentials', () => {
  const flip = (hex: string) => `${hex.slice(0, -4)}${hex.slice(-4) === 'abcd' ? '1234' : 'abcd'}`;
  const cases: Array<{ what: string; type: string; edit: Parameters<typeof tampered>[1] }> = [
    {
      what: 'the amount of the challenge',
      type: 'invalid-challenge',
      edit: (w) => (w.challenge.request = encodeRequest({ ...wireRequest(w), amount: '1' })),
    },
    {
      what: 'the recipient of the challenge',
      type: 'invalid-challenge',
      edit: (w) => (w.challenge.request = encodeRequest({ ...wireRequest(w), recipient: paid.payers[5]!.address })),
    },
    {
      what: 'the chain of the challenge',
      type: 'invalid-challenge',
      edit: (w) =>
        (w.challenge.request = encodeRequest({
          ...wireRequest(w),
          methodDetails: { ...(wireRequest(w).methodDetails as object), chainId: 8453 },
        })),
    },
    {
      what: 'the challenge id',
      type: 'invalid-challenge',
      edit: (w) => (w.challenge.id = `${String(w.challenge.id).slice(0, -2)}AA`),
    },
    {
      what: 'the expiry of the challenge',
      type: 'invalid-challenge',
      edit: (w) => (w.challenge.expires = new Date(Date.now() + 86_400_000).toISOString()),
    },
    {
      what: 'the realm of the challenge',
      type: 'invalid-challenge',
      edit: (w) => (w.challenge.realm = 'evil.example'),
    },
    { what: 'the authorized amount', type: 'verification-failed', edit: (w) => (w.payload.value = '1') },
    {
      what: 'the authorized recipient',
      type: 'verification-failed',
      edit: (w) => (w.payload.to = paid.payers[5]!.address),
    },
    {
      what: 'the signature',
      type: 'verification-failed',
      edit: (w) => (w.payload.signature = flip(String(w.payload.signature))),
    },
  ];
  for (const { what, type, edit } of cases) {
    it(`refuses a credential whose ${what} was changed, with the MPP problem "${type}", running nothing and charging nothing`, async () => {
      const payer = paid.payers[4]!;
      const credential = await signCredential(payer, url('annuity'), post('annuity'));
      const before = { runs: handlerRuns('annuity'), balance: await paid.balance(payer.address) };
      const res = await fetch(url('annuity'), post('annuity', { authorization: tampered(credential, edit) }));
      expect(res.status).toBe(402);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(((await res.json()) as { type: string }).type).toBe(`https://paymentauth.org/problems/${type}`);
      expect(Challenge.fromResponseList(res).length).toBeGreaterThan(0);
      expect(handlerRuns('annuity')).toBe(before.runs);
      expect(await paid.balance(payer.address)).toBe(before.balance);
    });
  }

  it('refuses a credential for an expired challenge with "payment-expired"', async () => {
    const probe = Challenge.fromResponseList(await fetch(url('annuity'), { method: 'POST' }))[0]!;
    const { id: _id, opaque: _opaque, ...fields } = probe;
    const expired = Challenge.from({
      ...fields,
      meta: { tool: 'annuity', salt: 'x' },
      expires: new Date(Date.now() - 1000).toISOString(),
      secretKey: SECRET,
    });
    const before = handlerRuns('annuity');
    const res = await fetch(url('annuity'), post('annuity', { authorization: await handSigned(expired, 'annuity') }));
    expect(res.status).toBe(402);
    expect(((await res.json()) as { type: string }).type).toBe('https://paymentauth.org/problems/payment-expired');
    expect(handlerRuns('annuity')).toBe(before);
  });

  it("refuses a credential answering another route's challenge (same price and pay-to), and one from another realm that shares the key", async () => {
    const credential = await signCredential(paid.payers[4]!, url('card-validate'), post('card-validate'));
    const before = handlerRuns('annuity');
    const other = await fetch(url('annuity'), post('annuity', { authorization: credential }));
    expect(other.status).toBe(402);
    expect(((await other.json()) as { detail: string }).detail).toMatch(/another tool/);
    const probe = Challenge.fromResponseList(await fetch(url('annuity'), { method: 'POST' }))[0]!;
    const { id: _id, opaque: _opaque, ...fields } = probe;
    const foreign = Challenge.from({
      ...fields,
      realm: 'other.example',
      meta: { tool: 'annuity', salt: 'y' },
      secretKey: SECRET,
    });
    const res = await fetch(url('annuity'), post('annuity', { authorization: await handSigned(foreign, 'annuity') }));
    expect(res.status).toBe(402);
    expect(((await res.json()) as { detail: string }).detail).toMatch(/realm/);
    expect(handlerRuns('annuity')).toBe(before);
  });

  it('refuses an unreadable or oversized credential with 402 "malformed-credential" and fresh challenges', async () => {
    const bad = await fetch(url('annuity'), post('annuity', { authorization: 'Payment !!!not-base64url!!!' }));
    expect(bad.status).toBe(402);
    expect(((await bad.json()) as { type: string }).type).toBe('https://paymentauth.org/problems/malformed-credential');
    expect(Challenge.fromResponseList(bad).length).toBeGreaterThan(0);
    const huge = await fetch(url('annuity'), post('annuity', { authorization: `Payment ${'A'.repeat(40_000)}` }));
    expect(huge.status).toBe(402);
    expect(((await huge.json()) as { detail: string }).detail).toMatch(/longer than/);
  });

  it('still refuses an invalid body with 400 naming the field before reading the credential', async () => {
    const credential = await signCredential(paid.payers[4]!, url('annuity'), post('annuity'));
    const res = await fetch(url('annuity'), {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: credential },
      body: JSON.stringify({ payment: 'x' }),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('invalid_input');
  });
});

describe('several instances', () => {
  it("accept each other's challenges when they share MPP_SECRET_KEY (stateless check), and refuse them with another key", async () => {
    const twin = await startTestServer(
      { ...paid.env, MPP_SECRET_KEY: SECRET, MPP_REALM: REALM },
      { tools: [annuity] as AnyToolDefinition[], dataDir: server.dataDir },
    );
    const stranger = await startTestServer(
      { ...paid.env, MPP_SECRET_KEY: `${SECRET}-other`, MPP_REALM: REALM },
      { tools: [annuity] as AnyToolDefinition[] },
    );
    try {
      const payer = paid.payers[6]!;
      const fromFirst = await signCredential(payer, url('annuity'), post('annuity'));
      const refused = await fetch(`${stranger.url}/api/annuity`, post('annuity', { authorization: fromFirst }));
      expect(refused.status).toBe(402);
      expect(((await refused.json()) as { type: string }).type).toBe(
        'https://paymentauth.org/problems/invalid-challenge',
      );
      const before = await paid.balance(payer.address);
      const accepted = await fetch(`${twin.url}/api/annuity`, post('annuity', { authorization: fromFirst }));
      expect(accepted.status).toBe(200);
      expect(await paid.balance(payer.address)).toBe(before - 1000n);
    } finally {
      await twin.close();
      await stranger.close();
    }
  });
});

describe('MPP turned off (MPP=off)', () => {
  let off: TestServer;
  beforeAll(async () => {
    off = await startTestServer({ ...paid.env, MPP: 'off' }, { tools: [annuity] as AnyToolDefinition[] });
  });
  afterAll(async () => off?.close());

  it('offers no MPP challenge and leaves the x402 challenge byte for byte as with MPP on', async () => {
    const [withMpp, without] = await Promise.all([
      fetch(url('annuity'), { method: 'POST' }),
      fetch(off.url + '/api/annuity', { method: 'POST' }),
    ]);
    expect(without.status).toBe(402);
    expect(without.headers.get('www-authenticate')).toBeNull();
    expect(withMpp.headers.get('www-authenticate')).not.toBeNull();
    expect(without.headers.get('payment-required')).toBe(withMpp.headers.get('payment-required'));
    expect(await without.text()).toBe(await withMpp.text());
  });

  it('answers Authorization: Payment with a clear error and charges nothing', async () => {
    const credential = await signCredential(paid.payers[4]!, url('annuity'), post('annuity'));
    const res = await fetch(off.url + '/api/annuity', post('annuity', { authorization: credential }));
    expect(res.status).toBe(400);
    const problem = (await res.json()) as { reason: string; detail: string };
    expect(problem.reason).toBe('mpp_disabled');
    expect(problem.detail).toMatch(/turned MPP off/);
  });
});
