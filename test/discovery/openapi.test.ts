import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { schemaObject } from '../../src/discovery/openapi-components.js';
import { openApiPath } from '../../src/discovery/openapi.js';
import { ErrorBodySchema } from '../../schemas/errors.js';
import { freeTools, paidTools as tools } from '../../tools/index.js';
import { decodeHeader, startTestServer, type TestServer } from '../support/server.js';

type Json = Record<string, any>;

let server: TestServer;
let doc: Json;
beforeAll(async () => {
  server = await startTestServer({
    BASE_URL_TOKEN: 'https://token.example.com',
    BASE_URL_SMM: 'https://smm.example.com',
  });
  doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as Json;
});
afterAll(() => server.close());

const operation = (path: string, method: string): Json => doc.paths[path]?.[method.toLowerCase()];

describe('GET /openapi.json', () => {
  it('is an OpenAPI 3.1 document in the 2020-12 schema dialect, also served at /.well-known/openapi.json for any origin', async () => {
    expect(doc).toMatchObject({
      openapi: '3.1.0',
      jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
      info: { title: 'Tollbooth' },
    });
    const alias = await fetch(`${server.url}/.well-known/openapi.json`);
    expect(alias.headers.get('access-control-allow-origin')).toBe('*');
    expect(alias.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await alias.json()).toEqual(doc);
  });

  it('passes the official OpenAPI 3.1 schema, and that check fails for a broken copy', async () => {
    const result = await new Validator().validate(structuredClone(doc));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    const broken = structuredClone(doc);
    delete broken.paths['/api/annuity'].post.responses['402'].description;
    expect((await new Validator().validate(broken)).valid).toBe(false);
  });

  it('declares no security scheme and no security requirement: paying is described by x-payment-info and the 402, not as an API key', () => {
    expect(doc.components.securitySchemes).toBeUndefined();
    expect(doc.security).toBeUndefined();
    for (const methods of Object.values(doc.paths) as Json[]) {
      for (const op of Object.values(methods).filter(
        (o): o is Json => typeof o === 'object' && o !== null && 'operationId' in o,
      )) {
        expect(op.security, op.operationId).toEqual([]);
        if (op['x-payment-info']) expect(op.responses['402'], op.operationId).toBeDefined();
      }
    }
  });

  it("puts every route under its group's server", () => {
    const tokenReport = tools.find((t) => t.group === 'token')!;
    const smmOrder = tools.find((t) => t.group === 'smm')!;
    const annuity = tools.find((t) => t.name === 'annuity')!;
    expect(doc.paths[tokenReport.path].servers).toEqual([{ url: 'https://token.example.com' }]);
    expect(doc.paths[smmOrder.path].servers).toEqual([{ url: 'https://smm.example.com' }]);
    expect(doc.paths[annuity.path].servers).toEqual([{ url: 'http://localhost:4021' }]);
    expect(doc.servers).toEqual(
      expect.arrayContaining([
        { url: 'http://localhost:4021' },
        { url: 'https://token.example.com' },
        { url: 'https://smm.example.com' },
      ]),
    );
  });

  for (const tool of tools) {
    it(`${tool.name}: input, output, the 402 and its price per option match what the route answers`, async () => {
      const op = operation(tool.path, tool.method);
      expect(op).toMatchObject({ operationId: tool.name, summary: tool.title, tags: [tool.group] });
      expect(doc.components.schemas[`${tool.name}.output`]).toBeDefined();
      if (tool.method === 'POST')
        expect(op.requestBody.content['application/json'].schema).toEqual({
          $ref: `#/components/schemas/${tool.name}.input`,
        });
      else expect(op.parameters.slice(1).every((p: Json) => p.in === 'query')).toBe(true);
      expect(op.responses['200'].content['application/json'].schema).toEqual({
        $ref: `#/components/schemas/${tool.name}.output`,
      });

      const res = await fetch(server.url + tool.path, { method: tool.method });
      const v1 = tool.group === 'transfers';
      const challenge = (v1 ? await res.json() : decodeHeader(res.headers.get('payment-required'))) as Json;
      const info = op['x-payment-info'];
      expect(info).toMatchObject({
        protocols: ['x402', 'mpp'],
        pricingMode: 'fixed',
        currency: 'USD',
        x402Version: challenge.x402Version,
      });
      expect(info.accepts.map((a: Json) => [a.scheme, a.network, a.asset, a.amount])).toEqual(
        challenge.accepts.map((a: Json) => [a.scheme, a.network, a.asset, a.amount ?? a.maxAmountRequired]),
      );
      expect(Number(info.price)).toBe(Math.min(...info.accepts.map((a: Json) => Number(a.usd))));
      // Payment is described as payment (x-payment-info, the 402, an optional payment header), never as an API key.
      expect(op.security).toEqual([]);
      expect(op.parameters[0]).toEqual({ $ref: `#/components/parameters/${v1 ? 'X-PAYMENT' : 'PAYMENT-SIGNATURE'}` });
      expect(doc.components.parameters[v1 ? 'X-PAYMENT' : 'PAYMENT-SIGNATURE']).toMatchObject({
        in: 'header',
        required: false,
      });
      expect(op.responses['402'].content['application/json'].schema).toEqual({
        $ref: `#/components/schemas/${v1 ? 'PaymentRequiredV1' : 'PaymentRequired'}`,
      });
      expect(op.responses['402'].headers?.['PAYMENT-REQUIRED']).toEqual(
        v1 ? undefined : { $ref: '#/components/headers/PAYMENT-REQUIRED' },
      );
      expect(op.responses['429']).toEqual({ $ref: '#/components/responses/RateLimited' });
      expect(op.responses['413']).toEqual(
        tool.method === 'POST' ? { $ref: '#/components/responses/PayloadTooLarge' } : undefined,
      );
    });
  }

  it('lists the free helpers without payment, with their path parameters', () => {
    for (const tool of freeTools) {
      const { path, params } = openApiPath(tool.path);
      const op = operation(path, tool.method);
      expect(op.operationId).toBe(tool.name);
      expect(op.security).toEqual([]);
      expect(op['x-payment-info']).toBeUndefined();
      expect(op.responses['402']).toBeUndefined();
      for (const name of params)
        expect(op.parameters).toContainEqual(expect.objectContaining({ name, in: 'path', required: true }));
    }
  });

  it('describes errors with the one error body both transports send, and 429 with Retry-After', async () => {
    expect(doc.components.schemas.Error).toEqual(
      schemaObject(z.toJSONSchema(ErrorBodySchema, { io: 'output' }) as Json),
    );
    expect(doc.components.responses.RateLimited.headers['Retry-After']).toEqual({
      $ref: '#/components/headers/Retry-After',
    });
    const bad = await fetch(`${server.url}/api/annuity`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"payment":"lots"}',
    });
    expect(ErrorBodySchema.safeParse(await bad.json()).success).toBe(true);
  });

  it('points to the other discovery documents and the MCP endpoint', () => {
    expect(doc['x-discovery']).toEqual({
      llmsTxtUrl: 'http://localhost:4021/llms.txt',
      wellKnownUrl: 'http://localhost:4021/.well-known/x402',
      mcpUrl: 'http://localhost:4021/mcp',
    });
  });
});
