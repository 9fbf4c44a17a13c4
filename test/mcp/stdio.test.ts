import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freeTools, paidTools as tools } from '../../tools/index.js';
import { connectStdioClient } from '../support/mcp.js';

let client: Client;
let stderr: () => string;
const dataDir = mkdtempSync(join(tmpdir(), 'tollbooth-stdio-'));
beforeAll(async () => {
  ({ client, stderr } = await connectStdioClient({ DATA_DIR: dataDir }));
});
afterAll(async () => {
  await client.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('MCP over stdio (the built CLI)', () => {
  it('lists the 16 tools of the registry with schemas, annotations and prices', async () => {
    const { tools: listed } = await client.listTools();
    expect(listed.map((t) => t.name)).toEqual([...tools, ...freeTools].map((t) => t.name));
    for (const t of listed) {
      expect(t.inputSchema.type).toBe('object');
      expect(t.outputSchema?.type).toBe('object');
      expect(t._meta?.['x402/price'] !== undefined).toBe(tools.some((paid) => paid.name === t.name));
    }
  });

  it('answers an unpaid call with the payment requirements', async () => {
    const result = await client.callTool({ name: 'card-validate', arguments: { number: '4111 1111 1111 1111' } });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ x402Version: 2, accepts: expect.any(Array) });
  });

  it('answers a probe without arguments with the payment requirements, and bad arguments with an error naming the field', async () => {
    const probe = await client.callTool({ name: 'solidity-scan' });
    expect(probe.structuredContent).toMatchObject({ x402Version: 2 });
    const bad = await client.callTool({ name: 'card-validate', arguments: { number: 42 } });
    expect(bad.isError).toBe(true);
    expect(JSON.parse((bad.content as Array<{ text: string }>)[0]!.text).error.field).toBe('number');
  });

  it('answers malformed tools/call params with invalid params (-32602) and an unknown argument with invalid_input naming it', async () => {
    const error = await client
      .request({ method: 'tools/call', params: { name: 'annuity', arguments: [1] } } as never, CallToolResultSchema)
      .catch((err: unknown) => err);
    expect(error).toBeInstanceOf(McpError);
    expect((error as McpError).code).toBe(ErrorCode.InvalidParams);
    expect((error as McpError).message).toContain(
      'tools/call needs params.name (string) and params.arguments (object, optional); params.arguments is an array.',
    );
    const unknown = await client.callTool({
      name: 'card-validate',
      arguments: { number: '4111 1111 1111 1111', cvv: '123' },
    });
    expect(unknown.isError).toBe(true);
    expect(JSON.parse((unknown.content as Array<{ text: string }>)[0]!.text).error).toMatchObject({
      code: 'invalid_input',
      field: 'cvv',
    });
  });

  it('warns on stderr, never stdout, that development pay-to addresses are in use', () => {
    expect(stderr()).toMatch(/DEVELOPMENT PAY-TO ADDRESSES/);
  });
});
