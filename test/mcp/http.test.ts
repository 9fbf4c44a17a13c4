import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freeTools, paidTools as tools } from '../../tools/index.js';
import { connectHttpClient } from '../support/mcp.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
let client: Client;
beforeAll(async () => {
  server = await startTestServer();
  client = await connectHttpClient(server.url);
});
afterAll(async () => {
  await client.close();
  await server.close();
});

const text = (result: Record<string, unknown>) => (result.content as Array<{ text: string }>)[0]!.text;

describe('MCP over streamable HTTP', () => {
  it('lists all tools with descriptions, annotations and the price before calling', async () => {
    const { tools: listed } = await client.listTools();
    expect(listed).toHaveLength(tools.length + freeTools.length);
    for (const t of listed.filter((l) => freeTools.every((f) => f.name !== l.name))) {
      expect(t.description).toMatch(/\$|USDC/);
      expect(t.annotations).toHaveProperty('readOnlyHint');
      const price = t._meta?.['x402/price'] as { usd: number; options: unknown[] };
      expect(price.usd).toBeGreaterThan(0);
      expect(price.options.length).toBeGreaterThan(0);
    }
    const annuity = listed.find((t) => t.name === 'annuity');
    expect((annuity?._meta?.['x402/price'] as { usd: number }).usd).toBe(0.001);
  });

  it('answers an unpaid call with the payment requirements as an isError result the official client accepts', async () => {
    const result = await client.callTool({
      name: 'annuity',
      arguments: { payment: 100, ratePerPeriod: 0.05, periods: 10 },
    });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ x402Version: 2, error: 'Payment required' });
    expect(JSON.parse(text(result))).toEqual(result.structuredContent);
  });

  it('answers invalid arguments with an error naming the field, not a payment request', async () => {
    const result = await client.callTool({
      name: 'annuity',
      arguments: { payment: 100, ratePerPeriod: 0.05, periods: 0 },
    });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toBeUndefined();
    const body = JSON.parse(text(result));
    expect(body.error.code).toBe('invalid_input');
    expect(body.error.field).toBe('periods');
    expect(body.error.message).toMatch(/periods/);
  });

  it('answers a malformed payment with a clear error, not a crash', async () => {
    const result = await client.callTool({
      name: 'annuity',
      arguments: { payment: 100, ratePerPeriod: 0.05, periods: 10 },
      _meta: { 'x402/payment': 'not base64 at all!' },
    });
    expect(result.isError).toBe(true);
    expect(JSON.parse(text(result)).error.code).toBe('invalid_payment');
  });

  it('answers an unknown tool with an error listing the tools', async () => {
    const result = await client.callTool({ name: 'nope' });
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/annuity/);
  });

  it('refuses requests whose Host or Origin is not allowed (DNS rebinding)', async () => {
    const init = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
    };
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const evilOrigin = await fetch(server.url + '/mcp', {
      method: 'POST',
      headers: { ...headers, origin: 'http://evil.example' },
      body: JSON.stringify(init),
    });
    expect(evilOrigin.status).toBe(403);
    const { request } = await import('node:http');
    const status = await new Promise<number>((resolve, reject) => {
      const url = new URL(server.url + '/mcp');
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          path: '/mcp',
          method: 'POST',
          headers: { ...headers, host: 'evil.example' },
        },
        (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify(init));
    });
    expect(status).toBe(403);
  });

  it('answers a body it cannot read with a JSON-RPC error and a 4xx status, never a server error', async () => {
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const notJson = await fetch(server.url + '/mcp', { method: 'POST', headers, body: '{"jsonrpc":' });
    expect(notJson.status).toBe(400);
    expect(await notJson.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32700 }, id: null });
    const charset = await fetch(server.url + '/mcp', {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json; charset=latin1' },
      body: '{}',
    });
    expect(charset.status).toBe(415);
    expect(await charset.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 } });
    const tooLarge = await fetch(server.url + '/mcp', {
      method: 'POST',
      headers,
      body: JSON.stringify({ pad: 'x'.repeat(1_100_000) }),
    });
    expect(tooLarge.status).toBe(413);
  });
});

describe('MCP session lifetime', () => {
  it('closes sessions that stay idle past MCP_SESSION_IDLE_MS, and a new session works', async () => {
    const short = await startTestServer({ MCP_SESSION_IDLE_MS: '150' });
    try {
      const idle = await connectHttpClient(short.url);
      await idle.listTools();
      await new Promise((r) => setTimeout(r, 500));
      await expect(idle.listTools()).rejects.toThrow();
      await idle.close().catch(() => {});
      const fresh = await connectHttpClient(short.url);
      expect((await fresh.listTools()).tools.length).toBeGreaterThan(0);
      await fresh.close();
    } finally {
      await short.close();
    }
  });
});
