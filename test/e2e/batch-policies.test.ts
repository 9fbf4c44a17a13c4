import type { PaymentRequired, SettleResponse } from '@x402/core/types';
import { rmSync } from 'node:fs';
import { x402Client } from '@x402/core/client';
import { registerExactEvmScheme } from '@x402/evm/exact/client';
import { wrapFetchWithPayment } from '@x402/fetch';
import { generatePrivateKey } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/agent/agent.js';
import { fetchRequest } from '../../src/agent/cli-fetch.js';
import { silentLogger } from '../../src/shared/log.js';
import { openStore } from '../../src/store/open.js';
import { agentDataDir } from '../support/agent.js';
import { batchAgentConfig } from '../support/batch-agent.js';
import { startBatchSettlementEnvironment, type BatchSettlementEnvironment } from '../support/chain/batch-settlement.js';
import { payOverHttp, payOverMcp } from '../support/batch-pay.js';
import { connectHttpClient } from '../support/mcp.js';
import { BASE_NETWORK, batchPayer } from '../support/chain/batch-settlement-parties.js';
import { decodeHeader, startTestServer, type TestServer } from '../support/server.js';
import { sideEffectTool, v1Echo } from '../support/tools.js';

/**
 * The fixed-option policies with BATCH_SETTLEMENT=on (src/payments/challenges/requirements.ts): a `base-short-name`
 * tool keeps its seed-form entry byte for byte and also offers the canonical `eip155:8453` batch entry, which the
 * official client pays; a `base-v1` tool keeps its version-1 body byte for byte and shows its v2 face (`exact` and
 * `batch-settlement` on `eip155:8453`) in PAYMENT-REQUIRED, which the official client pays over HTTP and MCP.
 */
let runs = 0;
const shortNamed = sideEffectTool('short-named', async () => void runs++, 'base-short-name');
let v1Runs = 0;
const v1Posted = sideEffectTool('v1-posted', async () => void v1Runs++, 'base-v1');

let env: BatchSettlementEnvironment;
/** The server with the switch on, and the same server with it off (the seed's challenges). */
let on: TestServer;
let off: TestServer;

beforeAll(async () => {
  // The in-process facilitator settles every seed option (v1 `base` too) and batch-settlement on Base.
  env = await startBatchSettlementEnvironment(3);
  const tools = [shortNamed, v1Echo, v1Posted];
  const batch = { BATCH_SETTLEMENT: 'on', BATCH_RECEIVER_AUTHORIZER_KEY: generatePrivateKey() };
  on = await startTestServer({ ...env.env, MPP: 'off', ...batch }, { tools });
  off = await startTestServer({ ...env.env, MPP: 'off', BATCH_SETTLEMENT: 'off' }, { tools });
}, 120_000);

afterAll(async () => {
  await off?.close();
  await on?.close();
  await env?.stop();
});

/** A tool's unpaid answer from `server`, its origin replaced so two servers' challenges compare byte for byte. */
async function unpaid(server: TestServer, path: string, method: 'GET' | 'POST') {
  const init = method === 'POST' ? { body: '{}', headers: { 'content-type': 'application/json' } } : {};
  const res = await fetch(`${server.url}${path}`, { method, ...init });
  const same = (text: string | null) => text?.replaceAll(server.url, 'ORIGIN') ?? null;
  const header = res.headers.get('payment-required');
  return {
    status: res.status,
    body: same(await res.text()),
    challenge: header ? (JSON.parse(same(JSON.stringify(decodeHeader(header)))!) as PaymentRequired) : undefined,
  };
}

describe('a base-short-name tool with batch settlement on', () => {
  it('keeps its seed-form entry byte for byte and offers the canonical Base batch entry after it', async () => {
    const seed = await unpaid(off, shortNamed.path, 'POST');
    const now = await unpaid(on, shortNamed.path, 'POST');
    expect([seed.status, now.status]).toEqual([402, 402]);
    expect(seed.challenge!.accepts).toHaveLength(1);
    expect(now.challenge!.accepts).toHaveLength(2);
    expect(JSON.stringify(now.challenge!.accepts[0])).toBe(JSON.stringify(seed.challenge!.accepts[0]));
    expect(now.challenge!.accepts[0]!.network).toBe('base');
    expect(now.challenge!.accepts[1]).toMatchObject({
      scheme: 'batch-settlement',
      network: BASE_NETWORK,
      amount: '1000',
      payTo: env.payTo,
    });
  });

  it('is paid by the official client with batch-settlement: a deposit, then a voucher-only call', async () => {
    const call = payOverHttp(batchPayer(env, env.payers[0]!), `${on.url}${shortNamed.path}`);
    const first = await call();
    expect(first.status).toBe(200);
    const deposit = decodeHeader(first.headers.get('payment-response')) as SettleResponse;
    expect(deposit).toMatchObject({ success: true, network: BASE_NETWORK, extra: { chargedAmount: '1000' } });
    expect(deposit.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    const second = await call();
    expect(second.status).toBe(200);
    expect(decodeHeader(second.headers.get('payment-response'))).toMatchObject({ success: true, transaction: '' });
    expect(runs).toBe(2);
    const [channel] = await on.runtime.store.channels!.list();
    expect(channel).toMatchObject({ chargedCumulativeAmount: '2000' });
  });
});

describe('a base-v1 tool with batch settlement on', () => {
  it('keeps its version-1 body byte for byte and shows its v2 face in PAYMENT-REQUIRED: exact, then batch on Base', async () => {
    for (const [tool, method] of [
      [v1Echo, 'GET'],
      [v1Posted, 'POST'],
    ] as const) {
      const seed = await unpaid(off, tool.path, method);
      const now = await unpaid(on, tool.path, method);
      expect([seed.status, now.status]).toEqual([402, 402]);
      expect(now.body).toBe(seed.body);
      expect(seed.challenge).toBeUndefined();
      const body = JSON.parse(now.body!) as {
        x402Version: number;
        accepts: { scheme: string; network: string; resource: string }[];
      };
      expect(body.x402Version).toBe(1);
      expect(body.accepts.map((a) => [a.scheme, a.network])).toEqual([['exact', 'base']]);
      expect(now.challenge!.x402Version).toBe(2);
      expect(now.challenge!.accepts.map((a) => [a.scheme, a.network, a.amount])).toEqual([
        ['exact', BASE_NETWORK, '1000'],
        ['batch-settlement', BASE_NETWORK, '1000'],
      ]);
      expect(now.challenge!.resource.url).toBe(body.accepts[0]!.resource);
    }
  });

  it('is paid by the official client with batch-settlement over HTTP and MCP, one channel, each call charged once', async () => {
    const payer = batchPayer(env, env.payers[0]!);
    const charged = async () => {
      const channels = await on.runtime.store.channels!.list();
      const mine = channels.filter((c) => c.channelConfig.payer.toLowerCase() === payer.account.address.toLowerCase());
      return mine.map((c) => BigInt(c.chargedCumulativeAmount));
    };
    const before = await charged(); // the channel the base-short-name tool's test opened, if it ran first
    const call = payOverHttp(payer, `${on.url}${v1Posted.path}`);
    const first = await call();
    expect(first.status).toBe(200);
    expect(first.headers.get('x-payment-response')).toBeNull();
    const deposit = decodeHeader(first.headers.get('payment-response')) as SettleResponse;
    expect(deposit).toMatchObject({ success: true, network: BASE_NETWORK, extra: { chargedAmount: '1000' } });
    const mcp = await connectHttpClient(on.url);
    try {
      const unpaidOverMcp = await mcp.callTool({ name: v1Posted.name, arguments: {} });
      expect(unpaidOverMcp.structuredContent).toMatchObject({ x402Version: 2 });
      const receipt = await payOverMcp(mcp, payer, v1Posted.name);
      expect(receipt).toMatchObject({ success: true, transaction: '', extra: { chargedAmount: '1000' } });
    } finally {
      await mcp.close();
    }
    const third = await call();
    expect(third.status).toBe(200);
    expect(decodeHeader(third.headers.get('payment-response'))).toMatchObject({ success: true, transaction: '' });
    expect(v1Runs).toBe(3);
    expect(await charged()).toEqual([(before[0] ?? 0n) + 3000n]);
  });

  it("is paid by the stock client's default registration (exact, v1 and v2) on the face's v2 exact entry", async () => {
    const client = registerExactEvmScheme(new x402Client(), { signer: env.payers[1]! });
    const pay = wrapFetchWithPayment(fetch, client);
    const before = v1Runs;
    const res = await pay(`${on.url}${v1Posted.path}`, {
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(200);
    const receipt = decodeHeader(res.headers.get('payment-response')) as SettleResponse;
    expect(receipt).toMatchObject({ success: true, network: BASE_NETWORK });
    expect(receipt.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(v1Runs).toBe(before + 1);
  });

  it("is paid by Tollbooth's agent side by voucher: it reads the v2 header first and books a deposit and vouchers", async () => {
    const dir = agentDataDir();
    const config = batchAgentConfig(env, 2, dir);
    const agent = await createAgent(config, silentLogger, openStore);
    try {
      const options = { signal: new AbortController().signal, approve: async () => 'accepted' as const };
      const request = () =>
        fetchRequest({
          url: `${on.url}${v1Posted.path}`,
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{}',
        });
      for (let i = 0; i < 2; i++)
        expect(await agent.caller.fetchUrl(request(), options)).toMatchObject({ type: 'success' });
      const kinds = (await agent.spends.listSpends()).map((x) => `${x.kind}:${x.status}`).sort();
      expect(kinds).toEqual(['deposit:settled', 'voucher:settled', 'voucher:settled']);
    } finally {
      await agent.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('is described in OpenAPI: both payment headers, PAYMENT-REQUIRED on the 402, the face options as version 2', async () => {
    type Operation = {
      parameters: { $ref?: string }[];
      responses: Record<string, { headers?: Record<string, unknown> }>;
      'x-payment-info': { x402Version: number; accepts: { scheme: string; network: string; x402Version?: number }[] };
    };
    const operation = async (server: TestServer) => {
      const doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as {
        paths: Record<string, Record<string, Operation>>;
      };
      return doc.paths[v1Posted.path]!.post!;
    };
    const [seed, now] = [await operation(off), await operation(on)];
    const refs = (op: Operation) => op.parameters.map((p) => p.$ref);
    expect(refs(seed)).toEqual(['#/components/parameters/X-PAYMENT']);
    expect(refs(now)).toEqual(['#/components/parameters/X-PAYMENT', '#/components/parameters/PAYMENT-SIGNATURE']);
    expect(seed.responses['402']!.headers).toBeUndefined();
    expect(Object.keys(now.responses['402']!.headers!)).toEqual(['PAYMENT-REQUIRED']);
    expect(Object.keys(now.responses['200']!.headers!)).toEqual(['X-PAYMENT-RESPONSE', 'PAYMENT-RESPONSE']);
    const info = now['x-payment-info'];
    expect(info.x402Version).toBe(1);
    expect(info.accepts.map((a) => [a.scheme, a.network, a.x402Version])).toEqual([
      ['exact', 'base', undefined],
      ['exact', BASE_NETWORK, 2],
      ['batch-settlement', BASE_NETWORK, 2],
    ]);
    expect(seed['x-payment-info'].accepts).toHaveLength(1);
  });

  it('is listed as MCP answers it: tools/list price, the well-known MCP item and llms.txt show the v2 face', async () => {
    type Price = { x402Version: number; options: { scheme: string; network: string }[] };
    const listed = async (server: TestServer) => {
      const client = await connectHttpClient(server.url);
      try {
        const tool = (await client.listTools()).tools.find((t) => t.name === v1Posted.name)!;
        const unpaid = await client.callTool({ name: v1Posted.name, arguments: {} });
        return { price: tool._meta!['x402/price'] as Price, answered: unpaid.structuredContent as PaymentRequired };
      } finally {
        await client.close();
      }
    };
    const [seed, now] = [await listed(off), await listed(on)];
    const pairs = (p: Price) => p.options.map((o) => [o.scheme, o.network]);
    expect([seed.price.x402Version, pairs(seed.price)]).toEqual([1, [['exact', 'base']]]);
    expect([now.price.x402Version, pairs(now.price)]).toEqual([
      2,
      [
        ['exact', BASE_NETWORK],
        ['batch-settlement', BASE_NETWORK],
      ],
    ]);
    expect(now.answered.accepts.map((a) => [a.scheme, a.network])).toEqual(pairs(now.price));
    type Item = { type: string; name: string; x402Version: number; accepts: { scheme: string }[] };
    const items = async (server: TestServer) =>
      ((await (await fetch(`${server.url}/.well-known/x402`)).json()) as { items: Item[] }).items
        .filter((i) => i.name === v1Posted.name)
        .map((i) => [i.type, i.x402Version, i.accepts.map((a) => a.scheme)]);
    expect(await items(off)).toEqual([
      ['http', 1, ['exact']],
      ['mcp', 1, ['exact']],
    ]);
    expect(await items(on)).toEqual([
      ['http', 1, ['exact']],
      ['mcp', 2, ['exact', 'batch-settlement']],
    ]);
    const line = async (server: TestServer) =>
      (await (await fetch(`${server.url}/llms.txt`)).text())
        .split('\n')
        .find((l) => l.startsWith(`- [${v1Posted.name}]`));
    expect(await line(off)).toMatch(/\(x402 v1\) —/);
    expect(await line(on)).toMatch(
      /\(x402 v1; x402 v2 with exact or batch-settlement in PAYMENT-SIGNATURE and over MCP\)/,
    );
  });

  it('still reads a version-1 payment as version 1: X-PAYMENT is refused in its own terms, PAYMENT-SIGNATURE on the face', async () => {
    const v1 = await fetch(`${on.url}${v1Posted.path}`, {
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json', 'x-payment': 'not base64 json' },
    });
    expect(v1.status).toBe(400);
    expect(((await v1.json()) as { error: { message: string } }).error.message).toMatch(/X-PAYMENT header/);
    const v2 = await fetch(`${on.url}${v1Posted.path}`, {
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json', 'payment-signature': 'not base64 json' },
    });
    expect(v2.status).toBe(400);
    expect(((await v2.json()) as { error: { message: string } }).error.message).toMatch(/PAYMENT-SIGNATURE header/);
  });
});
