import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Challenge } from 'mppx';
import { PaymentInfo, validate } from 'mppx/discovery';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paidTools as tools } from '../../tools/index.js';
import { connectHttpClient } from '../support/mcp.js';
import { startTestServer, type TestServer } from '../support/server.js';

type Json = Record<string, any>;

/** Everything a discovery reader can see on one server: the three documents and tools/list over MCP. */
interface Seen {
  openapi: Json;
  wellKnown: Json;
  llms: string;
  listed: Json[];
  instructions: string;
}

async function look(server: TestServer): Promise<Seen> {
  const get = (path: string) => fetch(server.url + path);
  const client: Client = await connectHttpClient(server.url);
  try {
    return {
      openapi: (await (await get('/openapi.json')).json()) as Json,
      wellKnown: (await (await get('/.well-known/x402')).json()) as Json,
      llms: await (await get('/llms.txt')).text(),
      listed: (await client.listTools()).tools as Json[],
      instructions: client.getInstructions() ?? '',
    };
  } finally {
    await client.close();
  }
}

/** The MPP challenges a bare probe of the tool's route receives, as mppx reads them, reduced to what an offer states. */
async function probeOffers(server: TestServer, tool: (typeof tools)[number]): Promise<Json[]> {
  const res = await fetch(server.url + tool.path, { method: tool.method });
  expect(res.status).toBe(402);
  if (!res.headers.get('www-authenticate')) return [];
  return Challenge.fromResponseList(res).map((c) => {
    const request = c.request as Json;
    return {
      method: c.method,
      intent: c.intent,
      realm: c.realm,
      amount: request.amount,
      currency: request.currency,
      recipient: request.recipient,
      chainId: request.methodDetails.chainId,
    };
  });
}

const operationOf = (doc: Json, tool: (typeof tools)[number]): Json => doc.paths[tool.path][tool.method.toLowerCase()];

describe('discovery with MPP on (the default)', () => {
  let server: TestServer;
  let seen: Seen;
  beforeAll(async () => {
    server = await startTestServer({ MPP_REALM: 'tools.example.com' });
    seen = await look(server);
  });
  afterAll(() => server.close());

  it("/openapi.json is a valid MPP discovery document by mppx's own validate(), and still passes the OpenAPI 3.1 schema", async () => {
    expect(validate(seen.openapi)).toEqual([]);
    const result = await new Validator().validate(structuredClone(seen.openapi));
    expect(result.errors ?? []).toEqual([]);
    expect(seen.openapi['x-service-info']).toEqual({
      docs: { homepage: `${new URL('/', 'http://localhost:4021').href}`, llms: 'http://localhost:4021/llms.txt' },
    });
  });

  it('lists on each paid operation the MPP offers a bare probe is challenged with: same amounts, currencies, recipients and chains, in order', async () => {
    let offered = 0;
    for (const tool of tools) {
      const info = operationOf(seen.openapi, tool)['x-payment-info'];
      const challenged = await probeOffers(server, tool);
      // The x402 fields stay as x402 readers know them.
      expect(info).toMatchObject({ protocols: ['x402', 'mpp'], pricingMode: 'fixed', currency: 'USD' });
      if (challenged.length === 0) {
        expect(info.mpp, tool.name).toBeUndefined();
        continue;
      }
      offered += 1;
      expect(info).toMatchObject({ method: 'evm', intent: 'charge', mpp: { realm: 'tools.example.com' } });
      expect(
        info.mpp.offers.map((o: Json) => ({
          method: o.method,
          intent: o.intent,
          realm: info.mpp.realm,
          amount: o.amount,
          currency: o.currency,
          recipient: o.recipient,
          chainId: o.methodDetails.chainId,
        })),
      ).toEqual(challenged);
      // mppx reads the flat form as one evm/charge offer, and the listed offers are a valid MPP offer list themselves.
      expect(PaymentInfo.parse(info).offers).toEqual([expect.objectContaining({ method: 'evm', intent: 'charge' })]);
      expect(PaymentInfo.parse({ offers: info.mpp.offers }).offers).toHaveLength(challenged.length);
      const op = operationOf(seen.openapi, tool);
      expect(op.responses['402'].headers['WWW-Authenticate']).toEqual({
        $ref: '#/components/headers/WWW-Authenticate',
      });
      expect(op.responses['200'].headers['Payment-Receipt']).toEqual({ $ref: '#/components/headers/Payment-Receipt' });
    }
    expect(offered).toBeGreaterThan(0);
  });

  it('/.well-known/x402 keeps its x402 fields and adds an mpp note: realm, evm/charge, where challenges, credentials and receipts go', () => {
    expect(seen.wellKnown).toMatchObject({
      version: 1,
      x402Version: 2,
      resources: expect.any(Array),
      items: expect.any(Array),
    });
    expect(seen.wellKnown.mpp).toMatchObject({
      realm: 'tools.example.com',
      method: 'evm',
      intent: 'charge',
      credential: { http: 'Authorization: Payment', mcp: '_meta["org.paymentauth/credential"]' },
      receipt: { http: 'Payment-Receipt', mcp: '_meta["org.paymentauth/receipt"]' },
    });
    for (const item of seen.wellKnown.items as Json[]) {
      const tool = tools.find((t) => t.name === item.name)!;
      expect(item.mpp?.offers ?? [], item.name).toEqual(
        operationOf(seen.openapi, tool)['x-payment-info'].mpp?.offers ?? [],
      );
    }
  });

  it('llms.txt says how to pay with MPP, in the "How to pay" section', () => {
    const howToPay = seen.llms.split('## How to pay')[1]!.split('## Endpoints')[0]!;
    expect(howToPay).toContain('Authorization: Payment <credential>');
    expect(howToPay).toContain('_meta["org.paymentauth/credential"]');
    expect(howToPay).toContain('realm `tools.example.com`');
  });

  it('tools/list puts the same MPP offers beside _meta["x402/price"], under _meta["org.paymentauth/offers"], and the instructions mention MPP', () => {
    for (const tool of tools) {
      const listed = seen.listed.find((t) => t.name === tool.name)!;
      expect(listed._meta['x402/price']).toBeDefined();
      const info = operationOf(seen.openapi, tool)['x-payment-info'];
      expect(listed._meta['org.paymentauth/offers'], tool.name).toEqual(info.mpp);
    }
    expect(seen.instructions).toContain('org.paymentauth/credential');
  });
});

describe('discovery with MPP=off', () => {
  let server: TestServer;
  let seen: Seen;
  beforeAll(async () => {
    server = await startTestServer({ MPP: 'off' });
    seen = await look(server);
  });
  afterAll(() => server.close());

  it('mentions MPP nowhere: no MPP field in /openapi.json, /.well-known/x402 or tools/list, no MPP line in llms.txt or the instructions', async () => {
    const everything = JSON.stringify([seen.openapi, seen.wellKnown, seen.listed]);
    for (const word of ['mpp', 'MPP', 'org.paymentauth', 'WWW-Authenticate', 'Payment-Receipt', 'x-service-info'])
      expect(everything).not.toContain(word);
    for (const tool of tools)
      expect(Object.keys(operationOf(seen.openapi, tool)['x-payment-info']).sort()).toEqual([
        'accepts',
        'currency',
        'price',
        'pricingMode',
        'protocols',
        'x402Version',
      ]);
    expect(seen.llms).not.toMatch(/MPP|org\.paymentauth|Authorization: Payment/);
    expect(seen.instructions).not.toMatch(/MPP|org\.paymentauth/);
    expect((await new Validator().validate(structuredClone(seen.openapi))).valid).toBe(true);
  });
});
