import { gzipSync } from 'node:zlib';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { CallToolResultSchema, ErrorCode, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newMcpServer } from '../../src/runtime/runtime.js';
import { freeTools, paidTools as tools } from '../../tools/index.js';
import { connectHttpClient } from '../support/mcp.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
const clients: Record<'streamable HTTP' | 'in-memory', Client> = {} as never;
beforeAll(async () => {
  server = await startTestServer();
  clients['streamable HTTP'] = await connectHttpClient(server.url);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await (await newMcpServer(server.runtime)).connect(serverSide);
  const memory = new Client({ name: 'tollbooth-test', version: '1.0.0' });
  await memory.connect(clientSide);
  clients['in-memory'] = memory;
});
afterAll(async () => {
  await Promise.all(Object.values(clients).map((c) => c.close()));
  await server.close();
});

const transports = ['streamable HTTP', 'in-memory'] as const;
const annuityArgs = { payment: 100, ratePerPeriod: 0.05, periods: 10 };
/** A payment that would be refused if it were ever read: these answers come before it is looked at. */
const fakePayment = { 'x402/payment': 'bm90IGEgcGF5bWVudA==' };

/** Sends tools/call with exactly these params (the official client passes them on unchecked). */
async function rawCall(client: Client, params: unknown): Promise<McpError> {
  const error = await client.request({ method: 'tools/call', params } as never, CallToolResultSchema).then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(error).toBeInstanceOf(McpError);
  return error as McpError;
}

const errorOf = (result: CallToolResult) =>
  JSON.parse((result.content[0] as { text: string }).text).error as { code: string; field?: string; message: string };

describe.each(transports)('tools/call with malformed params over %s', (transport) => {
  const malformed: Array<[string, unknown, string]> = [
    ['arguments an array', { name: 'annuity', arguments: [1, 2] }, 'params.arguments is an array'],
    ['arguments a string', { name: 'annuity', arguments: 'payment=100' }, 'params.arguments is a string'],
    ['arguments a number', { name: 'annuity', arguments: 3 }, 'params.arguments is a number'],
    ['arguments null', { name: 'annuity', arguments: null }, 'params.arguments is null'],
    ['no name', { arguments: annuityArgs }, 'params.name is missing'],
    ['a numeric name', { name: 7, arguments: annuityArgs }, 'params.name is a number'],
  ];

  it.each(malformed)(
    'answers %s with JSON-RPC invalid params (-32602) and one short sentence, even with a payment',
    async (_case, params, says) => {
      const error = await rawCall(clients[transport], { ...(params as object), _meta: fakePayment });
      expect(error.code).toBe(ErrorCode.InvalidParams);
      expect(error.message).toContain('tools/call needs params.name (string) and params.arguments (object, optional)');
      expect(error.message).toContain(says);
      // No schema dump: one line, no zod issue objects.
      expect(error.message).not.toMatch(/\n|"code"|expected/);
      expect(error.message.length).toBeLessThan(200);
    },
  );

  it('still answers a call without arguments with the payment requirements (a probe)', async () => {
    const result = (await clients[transport].callTool({ name: 'annuity' })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ x402Version: 2 });
  });

  it('still answers an unknown method with method-not-found', async () => {
    const error = await clients[transport]
      .request({ method: 'tools/frobnicate', params: {} } as never, CallToolResultSchema)
      .catch((err: unknown) => err);
    expect((error as McpError).code).toBe(ErrorCode.MethodNotFound);
  });
});

describe.each(transports)('unknown arguments over %s', (transport) => {
  it.each(tools.map((tool) => [tool.name, tool] as const))(
    '%s refuses an unknown argument with invalid_input naming it, not the payment requirements',
    async (_name, tool) => {
      const args = { ...(tool.example as Record<string, unknown> | undefined), zzUnknown: 1 };
      const result = (await clients[transport].callTool({
        name: tool.name,
        arguments: args,
        _meta: fakePayment,
      })) as CallToolResult;
      expect(result.isError).toBe(true);
      expect(result.structuredContent).toBeUndefined();
      const error = errorOf(result);
      expect(error).toMatchObject({ code: 'invalid_input', field: 'zzUnknown' });
      expect(error.message).toMatch(/^Unknown field: zzUnknown\. This endpoint takes: .*Nothing was charged\.$/);
    },
  );

  it('refuses an unknown argument of a free tool too', async () => {
    const result = (await clients[transport].callTool({
      name: 'smm-order-status',
      arguments: { orderId: 'ord_1', verbose: true },
    })) as CallToolResult;
    expect(errorOf(result)).toMatchObject({ code: 'invalid_input', field: 'verbose' });
  });
});

type JsonSchema = {
  type?: unknown;
  properties?: Record<string, JsonSchema>;
  additionalProperties?: unknown;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
};

/** Every object node of a JSON Schema, with its path. */
function objectNodes(schema: JsonSchema, path = '(input)'): Array<[string, JsonSchema]> {
  const own: Array<[string, JsonSchema]> = schema.type === 'object' ? [[path, schema]] : [];
  const below = [
    ...Object.entries(schema.properties ?? {}).flatMap(([key, child]) => objectNodes(child, `${path}.${key}`)),
    ...(schema.items ? objectNodes(schema.items, `${path}[]`) : []),
    ...(schema.anyOf ?? []).flatMap((child) => objectNodes(child, path)),
  ];
  return [...own, ...below];
}

describe('tools/list tells clients that unknown fields are refused', () => {
  it('lists every input schema, nested objects included, with additionalProperties false', async () => {
    const { tools: listed } = await clients['streamable HTTP'].listTools();
    expect(listed).toHaveLength(tools.length + freeTools.length);
    for (const tool of listed) {
      for (const [path, node] of objectNodes(tool.inputSchema as JsonSchema)) {
        expect(node.additionalProperties, `${tool.name} ${path}`).toBe(false);
      }
    }
  });
});

describe('/mcp bodies it cannot read', () => {
  const post = (body: Buffer | string, headers: Record<string, string>) =>
    fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body,
    });
  const initialize = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
  });

  it('answers an unsupported Content-Encoding with 415 and a JSON-RPC error, never a 500', async () => {
    const res = await post(initialize, { 'content-encoding': 'foo' });
    expect(res.status).toBe(415);
    const body = (await res.json()) as { jsonrpc: string; error: { code: number; message: string } };
    expect(body).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 } });
    expect(body.error.message).toContain('Content-Encoding foo is not supported');
  });

  it('answers a body that is not valid gzip with 400 and a JSON-RPC error, never a 500', async () => {
    const res = await post(initialize, { 'content-encoding': 'gzip' });
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { message: string } };
    expect(body.error.message).toContain('not valid gzip data');
  });

  it('reads a gzip body that is valid', async () => {
    const res = await post(gzipSync(initialize), { 'content-encoding': 'gzip' });
    expect(res.status).toBe(200);
    expect(res.headers.get('mcp-session-id')).toBeTruthy();
  });
});
