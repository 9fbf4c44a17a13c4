import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { portableSchema } from '../src/shared/mcp-wire.js';
import { inputJsonSchema, outputJsonSchema } from '../src/tool/tool-schema.js';
import { z } from 'zod';
import { freeTools, paidTools as tools } from '../tools/index.js';
import { asMcpChallenge, connectHttpClient } from './support/mcp.js';
import { decodeHeader, startTestServer, type TestServer } from './support/server.js';

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

describe('every tool of the registry is served identically on HTTP and MCP', () => {
  it('lists exactly the registry on MCP, in order: the paid tools, then the free helpers', async () => {
    const { tools: listed } = await client.listTools();
    expect(listed.map((t) => t.name)).toEqual([...tools, ...freeTools].map((t) => t.name));
  });

  for (const tool of tools) {
    it(`${tool.name}: same input schema, same output schema and same payment requirements on both transports`, async () => {
      const { tools: listed } = await client.listTools();
      const mcpTool = listed.find((t) => t.name === tool.name);
      expect(mcpTool).toBeDefined();
      expect(mcpTool?.inputSchema).toEqual(portableSchema(inputJsonSchema(tool)));
      expect((mcpTool?.outputSchema as unknown as { anyOf: unknown[] }).anyOf[0]).toEqual(
        portableSchema(outputJsonSchema(tool)),
      );
      expect(mcpTool?.description).toBe(tool.description);
      expect(mcpTool?.annotations).toMatchObject(tool.annotations);

      const http = await fetch(server.url + tool.path, { method: tool.method });
      expect(http.status).toBe(402);
      const httpChallenge =
        tool.group === 'transfers' ? await http.json() : decodeHeader(http.headers.get('payment-required'));

      const mcp = await client.callTool({ name: tool.name });
      expect(mcp.isError).toBe(true);
      // The one legitimate difference: MCP names the resource mcp://tool/<name> (x402 MCP transport).
      expect(mcp.structuredContent).toEqual(asMcpChallenge(httpChallenge, tool.name));
      expect(JSON.parse((mcp.content as Array<{ text: string }>)[0]!.text)).toEqual(
        asMcpChallenge(httpChallenge, tool.name),
      );
    });
  }
});

describe('every free helper of the registry is served identically on HTTP and MCP, without payment', () => {
  for (const tool of freeTools) {
    it(`${tool.name}: same schemas on MCP, and the same answer on both transports`, async () => {
      const { tools: listed } = await client.listTools();
      const mcpTool = listed.find((t) => t.name === tool.name);
      expect(mcpTool?.inputSchema).toEqual(
        portableSchema(z.toJSONSchema(tool.input, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>),
      );
      expect(mcpTool?.outputSchema).toEqual(
        portableSchema(
          z.toJSONSchema(tool.output, { io: 'output', unrepresentable: 'any' }) as Record<string, unknown>,
        ),
      );
      expect(mcpTool?.description).toBe(tool.description);
      expect(mcpTool?._meta?.['x402/price']).toBeUndefined();

      // Path parameters get a value; nothing else is sent, so both transports answer the same way (never a 402).
      const params = Object.fromEntries([...tool.path.matchAll(/:(\w+)/g)].map((m) => [m[1]!, 'order1']));
      const http = await fetch(server.url + tool.path.replace(/:(\w+)/g, 'order1'), { method: tool.method });
      expect(http.status).not.toBe(402);
      const mcp = await client.callTool({ name: tool.name, arguments: params });
      expect(mcp.isError ?? false).toBe(!http.ok);
      expect(JSON.parse((mcp.content as Array<{ text: string }>)[0]!.text)).toEqual(await http.json());
    });
  }
});
