import type { ServerResponse } from 'node:http';
import { generateProxy } from 'mppx/discovery';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CATALOG_LIMITS, loadCatalog } from '../../src/agent/catalog.js';
import { McpRemotes } from '../../src/agent/mcp-remote.js';
import { probeOpenApi } from '../../src/agent/openapi-source.js';
import { silentLogger } from '../../src/shared/log.js';
import { paidTools } from '../../tools/index.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { startX402Catalog, type X402Catalog } from '../support/x402-catalog.js';

const limits = {
  timeoutMs: 5000,
  maxTools: CATALOG_LIMITS.maxTools,
  maxDocumentBytes: CATALOG_LIMITS.maxDocumentBytes,
};
const SELLER = 'http://127.0.0.1:9/v1';

/** A document shaped as third parties publish for x402scan: servers elsewhere, `$ref`s, a path parameter, a free route. */
const thirdParty = {
  openapi: '3.1.0',
  info: { title: 'Quotes', version: '1.0.0' },
  servers: [{ url: SELLER }],
  paths: {
    '/quote': {
      get: {
        operationId: 'Get Quote!',
        summary: 'A quote',
        parameters: [
          { $ref: '#/components/parameters/Topic' },
          { name: 'x-api-key', in: 'header', schema: { type: 'string' } },
          { name: 'Authorization', in: 'header', schema: { type: 'string' } },
        ],
        responses: { '200': { description: 'ok' }, '402': { description: 'Payment Required' } },
        'x-payment-info': { protocols: ['x402'], pricingMode: 'fixed', price: '0.001' },
      },
    },
    '/reports/{reportId}': {
      post: {
        operationId: 'makeReport',
        description: 'Builds a report',
        parameters: [{ name: 'reportId', in: 'path', required: true, schema: { type: 'string' } }],
        requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/Report' } } } },
        'x-payment-info': { protocols: ['x402', 'mpp'], pricingMode: 'range', minPrice: '0.01', maxPrice: '$0.05' },
      },
    },
    '/free': { get: { operationId: 'free', responses: { '200': { description: 'ok' } } } },
    '/notes/{id}': {
      put: { operationId: 'putNote', 'x-payment-info': { pricingMode: 'fixed', price: '1' } },
      delete: {
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }],
        'x-payment-info': { pricingMode: 'fixed', price: '0.5' },
      },
      patch: {
        parameters: [{ name: 'Cookie', in: 'header', required: true, schema: { type: 'string' } }],
        'x-payment-info': { pricingMode: 'fixed', price: '0.5' },
      },
    },
  },
  components: {
    parameters: {
      Topic: { name: 'topic', in: 'query', required: true, description: 'What about', schema: { type: 'string' } },
    },
    schemas: {
      Report: { type: 'object', properties: { depth: { $ref: '#/components/schemas/Depth' } }, required: ['depth'] },
      Depth: { type: 'integer', minimum: 1 },
    },
  },
};

/** A document with one paid POST whose body schema is `schema`, beside `components`. */
function paidBody(schema: unknown, components: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: { title: 'Hostile', version: '1' },
    paths: {
      '/x': {
        post: {
          operationId: 'x',
          requestBody: { content: { 'application/json': { schema } } },
          'x-payment-info': { pricingMode: 'fixed', price: '0.01' },
        },
      },
    },
    components: { schemas: components },
  };
}

let catalog: X402Catalog;
/** The MCP connections the catalogs probe. */
const mcp = new McpRemotes();
let tollbooth: TestServer;

beforeAll(async () => {
  catalog = await startX402Catalog(thirdParty, '/openapi.json');
  tollbooth = await startTestServer();
});
afterAll(async () => {
  await mcp.close();
  await catalog?.close();
  await tollbooth?.close();
});

describe('remote mode tools from an OpenAPI document with x-payment-info', () => {
  it('turns each paid operation into a tool after finding no MCP endpoint and no /.well-known/x402', async () => {
    const tools = await loadCatalog(mcp, [{ url: catalog.url, prefix: 'q' }], 5000, silentLogger);
    expect(tools.map((t) => t.entry)).toEqual([
      {
        name: 'q_Get_Quote',
        description: 'A quote',
        inputSchema: {
          type: 'object',
          properties: { topic: { type: 'string', description: 'What about' }, 'x-api-key': { type: 'string' } },
          required: ['topic'],
        },
        _meta: { 'x402/price': { usd: '0.001', currency: 'USD' } },
      },
      {
        name: 'q_makeReport',
        description: 'Builds a report',
        inputSchema: {
          type: 'object',
          properties: { depth: { type: 'integer', minimum: 1 }, reportId: { type: 'string' } },
          required: ['depth', 'reportId'],
        },
        _meta: { 'x402/price': { usd: '0.05', currency: 'USD' } },
      },
      {
        name: 'q_putNote',
        inputSchema: { type: 'object', properties: {} },
        _meta: { 'x402/price': { usd: '1', currency: 'USD' } },
      },
      {
        name: 'q_notes_delete',
        inputSchema: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] },
        _meta: { 'x402/price': { usd: '0.5', currency: 'USD' } },
      },
    ]);
    expect(tools.map((t) => t.target.expectedUsdMicros)).toEqual([1000, 50_000, 1_000_000, 500_000]);
    expect(tools[0]!.target.request!({ topic: 'a b' })).toEqual({ url: `${SELLER}/quote?topic=a+b`, method: 'GET' });
    expect(tools[0]!.target.request!({ topic: 't', 'x-api-key': 'k1', Authorization: 'Bearer x' })).toEqual({
      url: `${SELLER}/quote?topic=t&Authorization=Bearer+x`,
      method: 'GET',
      headers: { 'x-api-key': 'k1' },
    });
    expect(tools[3]!.target.request!({ id: 'n 1' })).toEqual({ url: `${SELLER}/notes/n%201`, method: 'DELETE' });
    expect(() => tools[0]!.target.request!({ 'x-api-key': 'a\r\nHost: evil' })).toThrow(/x-api-key must be one line/);
    expect((await probeOpenApi(catalog.url, limits)).refused).toEqual([
      'PATCH /notes/{id}: it requires the header Cookie, which this agent does not let a tool set',
    ]);
    expect(tools[1]!.target.request!({ reportId: 'r 1', depth: 2 })).toEqual({
      url: `${SELLER}/reports/r%201`,
      method: 'POST',
      body: '{"reportId":"r 1","depth":2}',
    });
  });

  it("reads Tollbooth's own document when the URL names it: every paid route, $refs inlined, the price published", async () => {
    const doc = (await (await fetch(`${tollbooth.url}/openapi.json`)).json()) as {
      components: { schemas: Record<string, { properties: Record<string, unknown> }> };
    };
    const tools = await loadCatalog(mcp, [{ url: `${tollbooth.url}/openapi.json` }], 5000, silentLogger);
    expect(tools.map((t) => t.entry.name).sort()).toEqual(paidTools.map((t) => t.name).sort());
    for (const tool of tools) expect(JSON.stringify(tool.entry.inputSchema)).not.toContain('"$ref"');
    const annuity = tools.find((t) => t.entry.name === 'annuity')!;
    expect(Object.keys(annuity.entry.inputSchema.properties!)).toEqual(
      Object.keys(doc.components.schemas['annuity.input']!.properties),
    );
    expect(annuity.entry._meta).toEqual({ 'x402/price': { usd: '0.001', currency: 'USD' } });
    expect(annuity.target.request!({ payment: 1 })).toMatchObject({ method: 'POST', body: '{"payment":1}' });
    const get = tools.find((t) => t.entry.name === 'development-indicator')!;
    expect(get.target.request!({ country: 'DE' })).toMatchObject({
      method: 'GET',
      url: expect.stringMatching(/\/api\/development-indicator\?country=DE$/),
    });
  });

  it('reads an MPP discovery document as mppx generates it, with no dollar price (its amounts are in token units)', async () => {
    const mpp = generateProxy({
      routes: [
        {
          method: 'post',
          path: '/api/annuity',
          summary: 'Annuity',
          payment: {
            amount: '1000',
            currency: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
            method: 'evm',
            intent: 'charge',
          },
          requestBody: {
            content: { 'application/json': { schema: { type: 'object', properties: { n: { type: 'number' } } } } },
          },
        },
      ],
    });
    catalog.publish(mpp);
    const { source, items } = await probeOpenApi(catalog.url, limits);
    expect(source).toBe('openapi');
    expect(
      items.map(({ name, description, inputSchema, _meta }) => ({ name, description, inputSchema, _meta })),
    ).toEqual([
      {
        name: 'annuity',
        description: 'Annuity',
        inputSchema: { type: 'object', properties: { n: { type: 'number' } } },
        _meta: undefined,
      },
    ]);
    expect(items[0]!.request({ n: 1 })).toEqual({ url: `${catalog.url}/api/annuity`, method: 'POST', body: '{"n":1}' });
  });
});

describe('a hostile OpenAPI document', () => {
  const refused = async (document: unknown, reason: RegExp, timeoutMs = 5000) => {
    catalog.publish(document);
    await expect(probeOpenApi(catalog.url, { ...limits, timeoutMs })).rejects.toThrow(reason);
    expect(await loadCatalog(mcp, [{ url: catalog.url }], timeoutMs, silentLogger)).toEqual([]);
  };

  it('is refused when it is not JSON', async () => {
    await refused('<html>an index page</html>', /openapi\.json is not JSON/);
  });

  it('is refused past 1 MB, reading no further than the limit of an answer that never ends', async () => {
    const chunk = 'x'.repeat(64 * 1024);
    await refused((res: ServerResponse) => {
      res.writeHead(200, { 'content-type': 'application/json' }).write('{"openapi":"');
      const pump = () => {
        while (!res.destroyed && res.write(chunk));
        if (!res.destroyed) res.once('drain', pump);
      };
      pump();
    }, /openapi\.json is over 1048576 bytes/);
  });

  it('is refused when it nests deeper than 64 levels', async () => {
    await refused(`${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`, /nests deeper than 64 levels/);
  });

  it('is refused when an answer never finishes, once the time limit is over', async () => {
    await refused(
      (res: ServerResponse) => res.writeHead(200, { 'content-type': 'application/json' }).write('{"openapi":'),
      /openapi\.json gave no whole answer within 300 ms/,
      300,
    );
  });

  it('has an operation refused for a $ref loop, an exponential expansion or a reference outside the document', async () => {
    await refused(
      paidBody(
        { $ref: '#/components/schemas/Node' },
        {
          Node: { type: 'object', properties: { next: { $ref: '#/components/schemas/Node' } } },
        },
      ),
      /POST \/x: its schema has a \$ref loop at #\/components\/schemas\/Node/,
    );
    const levels = Object.fromEntries(
      Array.from({ length: 6 }, (_, i) => [
        `L${i}`,
        {
          type: 'object',
          properties: Object.fromEntries(
            Array.from({ length: 10 }, (_, k) => [`p${k}`, { $ref: `#/components/schemas/L${i + 1}` }]),
          ),
        },
      ]),
    );
    await refused(
      paidBody({ $ref: '#/components/schemas/L0' }, { ...levels, L6: { type: 'string' } }),
      /expands to more than 5000 nodes/,
    );
    await refused(
      paidBody({ $ref: 'https://schemas.example/evil.json' }),
      /\$ref https:\/\/schemas\.example\/evil\.json is not local/,
    );
  });
});
