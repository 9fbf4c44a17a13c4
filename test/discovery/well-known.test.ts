import { validateDiscoveryExtension, type DiscoveryExtension } from '@x402/extensions/bazaar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { paidTools as tools } from '../../tools/index.js';
import { startTestServer, type TestServer } from '../support/server.js';

type Json = Record<string, any>;

let server: TestServer;
let doc: Json;
let res: Response;
beforeAll(async () => {
  server = await startTestServer();
  res = await fetch(`${server.url}/.well-known/x402`);
  doc = (await res.json()) as Json;
});
afterAll(() => server.close());

describe('GET /.well-known/x402', () => {
  it("is x402scan's fan-out document: version 1 and every paid resource URL, readable from any origin", () => {
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(doc.version).toBe(1);
    expect(doc.resources).toEqual(tools.map((t) => `http://localhost:4021${t.path}`));
    expect(doc.instructions).toMatch(/PAYMENT-SIGNATURE/);
    expect(doc).toMatchObject({
      openapi: 'http://localhost:4021/openapi.json',
      llms: 'http://localhost:4021/llms.txt',
      mcp: 'http://localhost:4021/mcp',
    });
  });

  it("is served with the same body at /.well-known/x402.json, the well-known discovery draft's path", async () => {
    const json = await fetch(`${server.url}/.well-known/x402.json`);
    expect(json.status).toBe(200);
    expect(json.headers.get('content-type')).toMatch(/^application\/json/);
    expect(json.headers.get('access-control-allow-origin')).toBe('*');
    expect(await json.json()).toEqual(doc);
  });

  it("lists each paid tool as an http item in the bazaar's discovery-list shape", () => {
    const items = (doc.items as Json[]).filter((i) => i.type === 'http');
    expect(items).toHaveLength(tools.length);
    for (const item of items) {
      expect(Object.keys(item)).toEqual(
        expect.arrayContaining([
          'resource',
          'type',
          'x402Version',
          'accepts',
          'lastUpdated',
          'description',
          'mimeType',
          'method',
          'name',
          'price',
        ]),
      );
      expect(Number.isInteger(item.lastUpdated)).toBe(true);
      expect(item.lastUpdated).toBeLessThanOrEqual(Math.floor(Date.now() / 1000));
      expect(item.lastUpdated).toBeGreaterThan(1_700_000_000);
      expect(item.accepts.length).toBeGreaterThan(0);
      expect(item.price.currency).toBe('USD');
    }
  });

  it('carries a bazaar extension that the official validator accepts, for every http item of a v2 tool and every mcp item', () => {
    for (const item of doc.items as Json[]) {
      if (item.type === 'http' && item.x402Version === 1) {
        // Version 1 has no extensions: its discovery data is the specification's descriptor in accepts[0].outputSchema.
        expect(item.extensions).toBeUndefined();
        expect(item.accepts[0].outputSchema.input).toMatchObject({ type: 'http', discoverable: true });
        continue;
      }
      const result = validateDiscoveryExtension(item.extensions.bazaar as DiscoveryExtension);
      expect(result, `${item.type} ${item.name}: ${result.errors?.join('; ')}`).toMatchObject({ valid: true });
    }
  });

  it('lists each paid tool as an mcp item keyed by the /mcp URL and the tool name, with its input schema', () => {
    const items = (doc.items as Json[]).filter((i) => i.type === 'mcp');
    expect(items.map((i) => i.resource)).toEqual(tools.map(() => 'http://localhost:4021/mcp'));
    for (const [i, tool] of tools.entries()) {
      expect(items[i]!.extensions.bazaar.info.input).toMatchObject({
        type: 'mcp',
        toolName: tool.name,
        transport: 'streamable-http',
      });
      expect(items[i]!.extensions.bazaar.info.input.inputSchema.properties).toBeDefined();
    }
  });
});
