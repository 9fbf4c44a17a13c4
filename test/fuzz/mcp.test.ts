import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { McpError, ResultSchema } from '@modelcontextprotocol/sdk/types.js';
import type { PaymentRequired } from '@x402/core/types';
import fc from 'fast-check';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnyToolDefinition } from '../../src/tool/tool.js';
import { paidTools as tools } from '../../tools/index.js';
import { connectHttpClient } from '../support/mcp.js';
import { countingTools } from '../support/paid.js';
import { signExactPayment } from '../support/payer.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { arbitraryFor, fuzzOptions, hostileKey, hostileValue, inputSchemaOf, mutated } from './arbitraries.js';
import { hostilePaymentHeader, nearMissPayment } from './payments.js';
import { expectNoServerError, LIMITS_OFF, totalRuns } from './support.js';

let server: TestServer;
let client: Client;
let runs: Map<string, number>;
let signed: Record<string, unknown>;

beforeAll(async () => {
  const counted = countingTools(tools);
  runs = counted.runs;
  server = await startTestServer(LIMITS_OFF, { tools: counted.tools });
  client = await connectHttpClient(server.url);
  // A real signature for an advertised entry (signed offline); its near misses are what the fuzzer sends.
  const unpaid = await client.callTool({ name: tools[0]!.name });
  const entry = (unpaid.structuredContent as unknown as PaymentRequired).accepts.find(
    (a) => a.scheme === 'exact' && a.network.startsWith('eip155:'),
  )!;
  signed = (await signExactPayment(privateKeyToAccount(generatePrivateKey()), entry)) as unknown as Record<
    string,
    unknown
  >;
});
afterAll(async () => {
  await client?.close();
  await server?.close();
});

const byName = new Map<string, AnyToolDefinition>(tools.map((t) => [t.name, t]));

describe('fuzzing tools/call over MCP (a sample of what HTTP gets)', () => {
  it('answers any arguments and any payment value with an error result (or a protocol error for non-object arguments), never runs a handler, and the session survives', async () => {
    const cases = fc.constantFrom(...byName.keys()).chain((name) => {
      const schema = inputSchemaOf(byName.get(name)!.input);
      return fc.record({
        name: fc.constant(name),
        args: fc.oneof(
          arbitraryFor(schema),
          mutated(arbitraryFor(schema)),
          fc.dictionary(hostileKey, hostileValue, { maxKeys: 4 }),
          hostileValue,
        ),
        payment: fc.option(
          fc.oneof(
            hostileValue,
            hostilePaymentHeader(nearMissPayment(signed)).map((h) => h.value),
            nearMissPayment(signed),
          ),
          { nil: undefined },
        ),
      });
    });
    await fc.assert(
      fc.asyncProperty(cases, async ({ name, args, payment }) => {
        const what = `tools/call ${name} ${JSON.stringify(args)?.slice(0, 200)} payment ${JSON.stringify(payment)?.slice(0, 200)}`;
        try {
          const result = await client.request(
            {
              method: 'tools/call',
              params: {
                name,
                arguments: args as Record<string, unknown>,
                ...(payment === undefined ? {} : { _meta: { 'x402/payment': payment } }),
              },
            },
            // Any result shape: the fuzzer checks isError itself rather than let the client's output validation decide.
            ResultSchema,
          );
          expect((result as { isError?: boolean }).isError, what).toBe(true);
        } catch (err) {
          // Arguments that are not an object break the MCP request schema: the SDK refuses them before any tool code
          // runs (with -32603 rather than -32602, as it reports every request-schema failure). Objects never get here.
          const plainObject = typeof args === 'object' && args !== null && !Array.isArray(args);
          expect(plainObject, `${what}: ${String(err)}`).toBe(false);
          expect(err, what).toBeInstanceOf(McpError);
          expect([-32602, -32603], what).toContain((err as McpError).code);
        }
        expect(totalRuns(runs), what).toBe(0);
      }),
      fuzzOptions(200),
    );
    expect(await client.ping()).toEqual({});
  });

  it('answers any JSON posted to /mcp, with or without a session, with a JSON-RPC answer or a 4xx, never a server error', async () => {
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const init = {
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'fuzz', version: '1' } },
    };
    const opened = await fetch(server.url + '/mcp', { method: 'POST', headers, body: JSON.stringify(init) });
    await opened.text();
    const session = opened.headers.get('mcp-session-id')!;
    await fetch(server.url + '/mcp', {
      method: 'POST',
      headers: { ...headers, 'mcp-session-id': session },
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    });
    const message = fc.oneof(
      fc.jsonValue(),
      hostileValue,
      fc.record({
        jsonrpc: fc.oneof(fc.constant('2.0'), hostileValue),
        id: fc.oneof(fc.nat(), fc.string({ maxLength: 10 }), hostileValue),
        method: fc.oneof(
          fc.constantFrom(
            'tools/call',
            'tools/list',
            'initialize',
            'ping',
            'logging/setLevel',
            'completion/complete',
            'resources/list',
            'prompts/get',
            'notifications/cancelled',
          ),
          fc.string({ maxLength: 20 }),
        ),
        params: fc.oneof(
          fc.dictionary(hostileKey, hostileValue, { maxKeys: 4 }),
          hostileValue,
          fc.record({
            name: fc.constantFrom(...byName.keys()),
            arguments: hostileValue,
            _meta: fc.dictionary(hostileKey, hostileValue, { maxKeys: 3 }),
          }),
        ),
      }),
    );
    await fc.assert(
      fc.asyncProperty(message, fc.boolean(), fc.boolean(), async (body, withSession, batch) => {
        const res = await fetch(server.url + '/mcp', {
          method: 'POST',
          headers: { ...headers, ...(withSession ? { 'mcp-session-id': session } : {}) },
          body: JSON.stringify(batch ? [body] : body) ?? 'null',
        });
        await res.text();
        expectNoServerError(
          res.status,
          '/mcp',
          `POST /mcp ${withSession ? 'in a session' : 'without a session'}: ${JSON.stringify(body)?.slice(0, 300)}`,
        );
        expect(totalRuns(runs)).toBe(0);
      }),
      fuzzOptions(200),
    );
  });
});
