import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { x402Client } from '@x402/core/client';
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from '@x402/core/types';
import type { PaymentRequiredV1, PaymentRequirementsV1 } from '@x402/core/types/v1';
import { ExactEvmSchemeV1 } from '@x402/evm/exact/v1/client';
import { decodePaymentResponseHeader, wrapFetchWithPayment } from '@x402/fetch';
import type { PrivateKeyAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { BASE_MAINNET } from '../../src/shared/networks.js';
import { defineTool, type AnyToolDefinition } from '../../src/tool/tool.js';
import { annuity } from '../../tools/annuity.js';
import { smmOrder } from '../../tools/smm-order.js';
import { transfersEvm } from '../../tools/transfers-evm.js';
import { startBaseEnvironment, type BaseEnvironment } from '../support/chain/permit2-env.js';
import { withFlippedSignature } from '../support/chain/permit2-sign.js';
import { connectHttpClient } from '../support/mcp.js';
import { countingTools } from '../support/paid.js';
import { encodePayment } from '../support/payer.js';
import { decodeHeader, startTestServer, type TestServer } from '../support/server.js';
import { v1Echo } from '../support/tools.js';
import {
  expectWindowRefused,
  TEN_YEARS_SECONDS,
  UINT256_MAX,
  watchPaymentPath,
  withValidBefore,
} from '../support/window.js';

/** A paid tool in the social-order group, advertised with the `base` entry, that answers (smm-order is still a stub). */
const smmEcho = defineTool({
  name: 'smm-echo',
  title: 'smm echo',
  description: 'Test tool paid like the social order (one v2 entry named base).',
  group: 'smm',
  method: 'POST',
  path: '/smm/v1/test-echo',
  input: z.object({ note: z.string() }),
  output: z.object({ note: z.string() }),
  pricing: { usd: '0.005', accepts: 'base-short-name' },
  annotations: { readOnlyHint: false, idempotentHint: false, openWorldHint: false },
  handler: ({ note }) => ({ note }),
});

let base: BaseEnvironment;
let server: TestServer;
let mcp: Client;
let runs: Map<string, number>;
const order = { link: 'https://example.org/post/1', quantity: 100, serviceId: 7 };

beforeAll(async () => {
  base = await startBaseEnvironment(8);
  const counted = countingTools([v1Echo, smmEcho, transfersEvm, smmOrder, annuity] as AnyToolDefinition[]);
  runs = counted.runs;
  server = await startTestServer(base.env, { tools: counted.tools });
  mcp = await connectHttpClient(server.url);
}, 120_000);
afterAll(async () => {
  await mcp?.close();
  await server?.close();
  await base?.stop();
});

const runCount = (tool: string) => runs.get(tool) ?? 0;
const reasonOf = (answer: unknown) => {
  const { error } = answer as { error: string | { code: string } };
  return typeof error === 'string' ? error : error.code;
};

/** The official client, version 1: `x402Client.registerV1('base', ExactEvmSchemeV1)`. */
function v1Client(payer: PrivateKeyAccount): x402Client {
  return new x402Client().registerV1('base', new ExactEvmSchemeV1(payer));
}

/** The official client for the social order's v2 `base` entry: the v1 EVM signer registered under `base` for version 2. */
function baseEntryClient(payer: PrivateKeyAccount): x402Client {
  const client = new x402Client().register('base' as never, new ExactEvmSchemeV1(payer));
  client.setSpendControls({ maxAmountPerPayment: false }); // the order costs $3, over the client's default $1 cap
  return client;
}

async function v1Challenge(path = '/api/test/v1-echo'): Promise<PaymentRequiredV1> {
  const res = await fetch(server.url + path);
  expect(res.status).toBe(402);
  return (await res.json()) as PaymentRequiredV1;
}

/** An official v1 payment for the v1 entry, optionally signed for a changed requirement (tamper tests). */
async function v1Payment(
  payer: PrivateKeyAccount,
  change: Partial<PaymentRequirementsV1> = {},
): Promise<PaymentPayload> {
  const challenge = await v1Challenge();
  const accepts = challenge.accepts.map((a) => ({ ...a, ...change }));
  const client = v1Client(payer);
  client.setSpendControls({ allowedAssets: true }); // lets the tamper tests sign for another token
  return client.createPaymentPayload({ ...challenge, accepts } as never);
}

function getV1(path: string, payment: unknown, header = 'x-payment') {
  return fetch(server.url + path, { headers: { [header]: encodePayment(payment) } });
}

describe('version 1 on the transfers group: X-PAYMENT in, X-PAYMENT-RESPONSE out, network base', () => {
  it('answers a bare call with a v1 challenge in the body: one base entry with maxAmountRequired', async () => {
    const challenge = await v1Challenge();
    expect(challenge.x402Version).toBe(1);
    expect(challenge.accepts).toHaveLength(1);
    expect(challenge.accepts[0]).toMatchObject({
      scheme: 'exact',
      network: 'base',
      maxAmountRequired: '1000',
      payTo: base.payTo,
      asset: base.token,
      maxTimeoutSeconds: 60,
    });
  });

  it('is paid by the official fetch client with the v1 scheme: the receipt comes back in X-PAYMENT-RESPONSE', async () => {
    const payer = base.payers[0]!;
    const before = {
      payer: await base.balance(payer.address),
      payTo: await base.balance(base.payTo),
      runs: runCount('v1-echo'),
    };
    const res = await wrapFetchWithPayment(fetch, v1Client(payer))(server.url + '/api/test/v1-echo?note=hello');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ note: 'hello' });
    expect(res.headers.get('PAYMENT-RESPONSE')).toBeNull();
    const receipt = decodePaymentResponseHeader(res.headers.get('X-PAYMENT-RESPONSE')!);
    expect(receipt).toMatchObject({ success: true, network: 'base', payer: payer.address });
    expect(receipt.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(runCount('v1-echo')).toBe(before.runs + 1);
    expect(await base.balance(payer.address)).toBe(before.payer - 1000n);
    expect(await base.balance(base.payTo)).toBe(before.payTo + 1000n);
  });

  it('is paid over MCP (streamable HTTP) with a v1 payload in _meta', async () => {
    const payer = base.payers[1]!;
    const unpaid = await mcp.callTool({ name: 'v1-echo', arguments: { note: 'mcp' } });
    const challenge = unpaid.structuredContent as unknown as PaymentRequiredV1;
    expect(challenge.x402Version).toBe(1);
    const payment = await v1Client(payer).createPaymentPayload(challenge as never);
    const before = await base.balance(payer.address);
    const result = await mcp.callTool({
      name: 'v1-echo',
      arguments: { note: 'mcp' },
      _meta: { 'x402/payment': payment },
    });
    expect(result.isError).toBeFalsy();
    expect(result._meta?.['x402/payment-response']).toMatchObject({
      success: true,
      network: 'base',
      payer: payer.address,
    });
    expect(await base.balance(payer.address)).toBe(before - 1000n);
  });

  it('verifies a v1 payment for transfers-evm whose handler then refuses the block range: nothing is settled and the authorization stays usable', async () => {
    const payer = base.payers[2]!;
    const payment = await v1Payment(payer);
    const before = { payer: await base.balance(payer.address), runs: runCount('transfers-evm') };
    // A start block beyond the chain head is only found out by the handler, after verification.
    const res = await getV1(`/api/transfers/evm?address=${payer.address}&fromBlock=99999999`, payment);
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: { code: 'invalid_input', field: 'fromBlock' } });
    expect(runCount('transfers-evm')).toBe(before.runs + 1);
    expect(await base.balance(payer.address)).toBe(before.payer);
    // The same authorization (same payee and amount on Base) still pays for a v1 call that succeeds.
    expect((await getV1('/api/test/v1-echo?note=later', payment)).status).toBe(200);
    expect(await base.balance(payer.address)).toBe(before.payer - 1000n);
  });

  const tampered: [string, (payer: PrivateKeyAccount) => Promise<PaymentPayload>, number, string][] = [
    [
      'another network name',
      async (p) => ({ ...(await v1Payment(p)), network: 'base-sepolia' }) as PaymentPayload,
      402,
      'no_matching_payment_requirements',
    ],
    [
      'another scheme',
      async (p) => ({ ...(await v1Payment(p)), scheme: 'upto' }) as PaymentPayload,
      402,
      'no_matching_payment_requirements',
    ],
    [
      'a signed value below the price',
      (p) => v1Payment(p, { maxAmountRequired: '999' }),
      402,
      'invalid_exact_evm_authorization_value',
    ],
    [
      'a signed payee that is not ours',
      (p) => v1Payment(p, { payTo: base.payers[7]!.address }),
      402,
      'invalid_exact_evm_recipient_mismatch',
    ],
    [
      'an authorization that already expired',
      (p) => v1Payment(p, { maxTimeoutSeconds: -120 }),
      402,
      'invalid_exact_evm_payload_authorization_valid_before',
    ],
    [
      'a signature for another token',
      (p) => v1Payment(p, { asset: '0x036CbD53842c5426634e7929541eC2318f3dCF7e' }),
      402,
      'invalid_exact_evm_signature',
    ],
    [
      'a corrupted signature',
      async (p) => withFlippedSignature(await v1Payment(p)),
      402,
      'invalid_exact_evm_signature',
    ],
  ];
  for (const [label, make, status, reason] of tampered) {
    it(`refuses ${label} (${reason}) without running the tool`, async () => {
      const payer = base.payers[3]!;
      const before = { payer: await base.balance(payer.address), runs: runCount('v1-echo') };
      const res = await getV1('/api/test/v1-echo?note=x', await make(payer));
      expect(res.status).toBe(status);
      expect(reasonOf(await res.json())).toBe(reason);
      expect(runCount('v1-echo')).toBe(before.runs);
      expect(await base.balance(payer.address)).toBe(before.payer);
    });
  }

  it('refuses the same X-PAYMENT sent again, and 5 concurrent copies buy exactly one execution and one settlement', async () => {
    const payer = base.payers[4]!;
    const before = { payer: await base.balance(payer.address), runs: runCount('v1-echo') };
    const sequential = await v1Payment(payer);
    expect((await getV1('/api/test/v1-echo?note=1', sequential)).status).toBe(200);
    const again = await getV1('/api/test/v1-echo?note=1', sequential);
    expect(again.status).toBe(402);
    expect(reasonOf(await again.json())).toBe('payment_already_used');
    const concurrent = await v1Payment(payer);
    const answers = await Promise.all(Array.from({ length: 5 }, () => getV1('/api/test/v1-echo?note=2', concurrent)));
    expect(answers.filter((r) => r.status === 200)).toHaveLength(1);
    for (const r of answers.filter((a) => a.status !== 200))
      expect(['payment_in_flight', 'payment_already_used']).toContain(reasonOf(await r.json()));
    expect(runCount('v1-echo')).toBe(before.runs + 2);
    expect(await base.balance(payer.address)).toBe(before.payer - 2000n);
  });

  it('does not let one EIP-3009 authorization buy a v1 call and then a v2 call on the same chain, payee and price', async () => {
    const payer = base.payers[5]!;
    const payment = await v1Payment(payer);
    expect((await getV1('/api/test/v1-echo?note=once', payment)).status).toBe(200);
    const probe = await fetch(server.url + '/api/annuity', { method: 'POST' });
    const tools = decodeHeader(probe.headers.get('payment-required')) as PaymentRequired;
    const exactOnBase = tools.accepts.find((a) => a.scheme === 'exact' && a.network === BASE_MAINNET)!;
    const asV2 = { x402Version: 2, accepted: exactOnBase, payload: payment.payload };
    const before = runCount('annuity');
    const res = await fetch(server.url + '/api/annuity', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'payment-signature': encodePayment(asV2) },
      body: JSON.stringify({ payment: 100, ratePerPeriod: 0.05, periods: 10 }),
    });
    expect(res.status).toBe(402);
    expect(reasonOf(await res.json())).toBe('payment_already_used');
    expect(runCount('annuity')).toBe(before);
  });

  it('refuses a v1 authorization valid for ten years or until 2^256−1 before claiming or verifying it, and takes one for 60 s', async () => {
    const payer = base.payers[3]!;
    const watch = watchPaymentPath(server.runtime);
    const before = { payer: await base.balance(payer.address), runs: runCount('v1-echo'), ...watch };
    const [entry] = (await v1Challenge()).accepts;
    // The official v1 client signs now + maxTimeoutSeconds: asked for ten years, it signs ten years.
    const tenYears = await v1Payment(payer, { maxTimeoutSeconds: Number(TEN_YEARS_SECONDS) });
    const forever = await withValidBefore(
      payer,
      await v1Payment(payer),
      { asset: entry!.asset, chainId: 8453, extra: entry!.extra ?? {} },
      UINT256_MAX,
    );
    for (const payment of [tenYears, forever])
      await expectWindowRefused(await getV1('/api/test/v1-echo?note=long', payment), 60);
    expect({ ...watch }).toEqual({ claims: before.claims, verifies: before.verifies });
    expect(runCount('v1-echo')).toBe(before.runs);
    const res = await getV1('/api/test/v1-echo?note=short', await v1Payment(payer));
    expect(res.status).toBe(200);
    expect({ ...watch }).toEqual({ claims: before.claims + 1, verifies: before.verifies + 1 });
    expect(await base.balance(payer.address)).toBe(before.payer - 1000n);
  });
});

describe('a version mismatch is refused with the header and version to use', () => {
  it('refuses X-PAYMENT on a v2 endpoint and PAYMENT-SIGNATURE on the v1 endpoint', async () => {
    const payment = await v1Payment(base.payers[6]!);
    const onV2 = await fetch(server.url + '/api/annuity', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-payment': encodePayment(payment) },
      body: JSON.stringify({ payment: 100, ratePerPeriod: 0.05, periods: 10 }),
    });
    expect(onV2.status).toBe(400);
    const v2Error = (await onV2.json()) as { error: { code: string; message: string } };
    expect(v2Error.error.code).toBe('invalid_x402_version');
    expect(v2Error.error.message).toMatch(/PAYMENT-SIGNATURE/);
    const onV1 = await getV1('/api/test/v1-echo?note=x', payment, 'payment-signature');
    expect(onV1.status).toBe(400);
    const v1Error = (await onV1.json()) as { error: { code: string; message: string } };
    expect(v1Error.error.code).toBe('invalid_x402_version');
    expect(v1Error.error.message).toMatch(/X-PAYMENT/);
  });

  it('refuses a version-2 payload in X-PAYMENT, and a version-1 payload over MCP for a v2 tool', async () => {
    const payer = base.payers[6]!;
    const v2Payload = {
      x402Version: 2,
      accepted: {
        scheme: 'exact',
        network: BASE_MAINNET,
        asset: base.token,
        amount: '1000',
        payTo: base.payTo,
        maxTimeoutSeconds: 60,
        extra: {},
      },
      payload: (await v1Payment(payer)).payload,
    };
    const res = await getV1('/api/test/v1-echo?note=x', v2Payload);
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { message: string } }).error.message).toMatch(/version 1.*X-PAYMENT/);
    const before = runCount('annuity');
    const overMcp = await mcp.callTool({
      name: 'annuity',
      arguments: { payment: 100, ratePerPeriod: 0.05, periods: 10 },
      _meta: { 'x402/payment': await v1Payment(payer) },
    });
    expect(overMcp.isError).toBe(true);
    expect(JSON.stringify(overMcp.content)).toMatch(/invalid_x402_version/);
    expect(runCount('annuity')).toBe(before);
  });
});

describe("the social order's v2 entry named base, with both amount fields", () => {
  async function orderChallenge(path: string): Promise<PaymentRequired> {
    const res = await fetch(server.url + path, { method: 'POST' });
    return decodeHeader(res.headers.get('payment-required')) as PaymentRequired;
  }

  it('advertises exactly one v2 entry on base carrying amount and maxAmountRequired', async () => {
    const challenge = await orderChallenge('/smm/v1/smm-order');
    expect(challenge.x402Version).toBe(2);
    expect(challenge.accepts).toHaveLength(1);
    expect(challenge.accepts[0]).toMatchObject({
      scheme: 'exact',
      network: 'base',
      amount: '3000000',
      maxAmountRequired: '3000000',
      asset: base.token,
      payTo: base.payTo,
    });
  });

  it('refuses smm-order before any payment when no marketing panel is configured (SMM_PANEL_URL): nothing runs or settles', async () => {
    const payer = base.payers[6]!;
    const before = { payer: await base.balance(payer.address), runs: runCount('smm-order') };
    const res = await wrapFetchWithPayment(fetch, baseEntryClient(payer))(server.url + '/smm/v1/smm-order', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(order),
    });
    expect(res.status).toBe(501);
    expect(reasonOf(await res.json())).toBe('not_implemented');
    expect(runCount('smm-order')).toBe(before.runs);
    expect(await base.balance(payer.address)).toBe(before.payer);
  });

  it('settles a paid call in the social-order group on chain 8453 through the base entry, once', async () => {
    const payer = base.payers[7]!;
    const challenge = await orderChallenge('/smm/v1/test-echo');
    const payment = await baseEntryClient(payer).createPaymentPayload(challenge);
    expect(payment.accepted).toEqual(challenge.accepts[0]);
    const send = (p: unknown) =>
      fetch(server.url + '/smm/v1/test-echo', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'payment-signature': encodePayment(p) },
        body: JSON.stringify({ note: 'order' }),
      });
    const before = {
      payer: await base.balance(payer.address),
      payTo: await base.balance(base.payTo),
      runs: runCount('smm-echo'),
    };
    const res = await send(payment);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ note: 'order' });
    expect(decodeHeader(res.headers.get('payment-response'))).toMatchObject({
      success: true,
      network: BASE_MAINNET,
      payer: payer.address,
    });
    expect(await base.balance(payer.address)).toBe(before.payer - 5000n);
    expect(await base.balance(base.payTo)).toBe(before.payTo + 5000n);
    const again = await send(payment);
    expect(again.status).toBe(402);
    expect(reasonOf(await again.json())).toBe('payment_already_used');
    expect(runCount('smm-echo')).toBe(before.runs + 1);
  });

  it('refuses echoes that differ from the advertised entry, and a signature for less than the price', async () => {
    const payer = base.payers[7]!;
    const challenge = await orderChallenge('/smm/v1/test-echo');
    const entry = challenge.accepts[0] as PaymentRequirements & { maxAmountRequired: string };
    const official = await baseEntryClient(payer).createPaymentPayload(challenge);
    const underpaid = await baseEntryClient(payer).createPaymentPayload({
      ...challenge,
      accepts: [{ ...entry, amount: '4000', maxAmountRequired: '4000' } as PaymentRequirements],
    });
    const cases: [unknown, string][] = [
      [{ ...official, accepted: { ...entry, maxAmountRequired: '1' } }, 'no_matching_payment_requirements'],
      [{ ...official, accepted: { ...entry, network: BASE_MAINNET } }, 'no_matching_payment_requirements'],
      [{ ...official, accepted: { ...entry, payTo: payer.address } }, 'no_matching_payment_requirements'],
      [{ ...underpaid, accepted: entry }, 'invalid_exact_evm_payload_authorization_value_mismatch'],
    ];
    const before = { payer: await base.balance(payer.address), runs: runCount('smm-echo') };
    for (const [payment, reason] of cases) {
      const res = await fetch(server.url + '/smm/v1/test-echo', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'payment-signature': encodePayment(payment) },
        body: JSON.stringify({ note: 'tampered' }),
      });
      expect(res.status, reason).toBe(402);
      expect(reasonOf(await res.json())).toBe(reason);
    }
    expect(runCount('smm-echo')).toBe(before.runs);
    expect(await base.balance(payer.address)).toBe(before.payer);
  });
});
