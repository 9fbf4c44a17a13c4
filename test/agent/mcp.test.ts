import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { ElicitRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { AGENT_TOOLS } from '../../src/agent/agent-tools.js';
import { PAYMENT_NOTE_META_KEY, toMcpResult } from '../../src/agent/mcp.js';
import type { RemoteChallenge } from '../../src/agent/http.js';
import { loadConfig } from '../../src/config/config.js';
import { mcpCatalog } from '../../src/discovery/mcp-tools.js';
import { ToolError } from '../../src/shared/errors.js';
import { createMcpServer, type McpCallSession, type McpExecutor } from '../../src/mcp/server.js';
import { isPaid } from '../../src/tool/tool.js';
import { freeTools, paidTools as tools } from '../../tools/index.js';

const config = loadConfig({ LOG_LEVEL: 'silent' });
const challenge: RemoteChallenge = {
  x402Version: 2,
  error: 'Payment required',
  accepts: [
    {
      scheme: 'exact',
      network: 'eip155:8453',
      asset: '0xA',
      amount: '1000',
      payTo: '0xB',
      maxTimeoutSeconds: 300,
      extra: {},
    },
  ],
};
const note = {
  status: 'settled' as const,
  protocol: 'x402' as const,
  network: 'eip155:8453',
  asset: '0xA',
  amount: '1000',
  usd: '$0.001',
  spentToday: '$0.001',
  remainingToday: '$0.999',
};
const receipt = { success: true, transaction: '0xtx', network: 'eip155:8453' as const };
/** A stub answer (an error result, so the client checks no structured content against the tool's output schema). */
const ok = (label: string): CallToolResult => ({ isError: true, content: [{ type: 'text', text: label }] });

/** Connects the official client to a server whose calls go to `executor`, over an in-memory transport. */
async function connect(
  executor: McpExecutor,
  answer?: (message: string) => { action: 'accept' | 'decline'; content?: Record<string, unknown> },
): Promise<Client> {
  const server = createMcpServer({
    catalog: mcpCatalog(config, [...tools, ...freeTools]),
    version: 'test',
    executor,
    instructions: 'remote',
  });
  const client = new Client(
    { name: 'test', version: '1' },
    { capabilities: answer ? { elicitation: { form: {} } } : {} },
  );
  if (answer) client.setRequestHandler(ElicitRequestSchema, async (req) => answer(req.params.message));
  const [a, b] = InMemoryTransport.createLinkedPair();
  await Promise.all([server.connect(a), client.connect(b)]);
  return client;
}

/** An executor that records what it was asked and, for paid calls, asks the user to confirm. */
function recorder() {
  const calls: string[] = [];
  const answers: string[] = [];
  const executor: McpExecutor = {
    extraTools: AGENT_TOOLS,
    call: async (tool, _args, session: McpCallSession) => {
      if (!isPaid(tool)) return (calls.push(`free ${tool.name}`), ok(tool.name));
      calls.push(`paid ${tool.name}`);
      answers.push(await session.confirm(`pay for ${tool.name}?`));
      return ok(tool.name);
    },
    extra: async (name) => (calls.push(`extra ${name}`), ok(name)),
  };
  return { executor, calls, answers };
}

describe('the MCP server with an executor in place of the local pipeline', () => {
  it("lists the registry from the same definitions, then the executor's own tools, and routes each call by kind", async () => {
    const { executor, calls } = recorder();
    const client = await connect(executor);
    const { tools: listed } = await client.listTools();
    expect(listed.map((t) => t.name)).toEqual(
      [...tools, ...freeTools].map((t) => t.name).concat(['wallet-status', 'spending-history']),
    );
    expect(client.getInstructions()).toBe('remote');
    await client.callTool({ name: 'annuity', arguments: {} });
    await client.callTool({ name: 'smm-quote', arguments: {} });
    await client.callTool({ name: 'wallet-status', arguments: {} });
    const unknown = await client.callTool({ name: 'nope', arguments: {} });
    expect(calls).toEqual(['paid annuity', 'free smm-quote', 'extra wallet-status']);
    expect(unknown.isError).toBe(true);
    await client.close();
  });

  it('asks the user through form elicitation: accepted only with approve true, declined otherwise, unavailable without the capability', async () => {
    for (const [answer, expected] of [
      [() => ({ action: 'accept' as const, content: { approve: true } }), 'accepted'],
      [() => ({ action: 'accept' as const, content: { approve: false } }), 'declined'],
      [() => ({ action: 'decline' as const }), 'declined'],
      [undefined, 'unavailable'],
    ] as const) {
      const { executor, answers } = recorder();
      const client = await connect(executor, answer);
      await client.callTool({ name: 'annuity', arguments: {} });
      expect(answers).toEqual([expected]);
      await client.close();
    }
  });
});

describe('encoding a remote call as a tool result', () => {
  it('puts the output in structuredContent, the receipt and the payment note in _meta', () => {
    expect(toMcpResult({ type: 'success', output: { km: 1 }, receipt, payment: note })).toEqual({
      content: [{ type: 'text', text: '{"km":1}' }],
      structuredContent: { km: 1 },
      _meta: { 'x402/payment-response': receipt, [PAYMENT_NOTE_META_KEY]: note },
    });
  });

  it('puts an MPP receipt under org.paymentauth/receipt', () => {
    const mppReceipt = { method: 'evm', reference: '0xtx', status: 'success', timestamp: '2026-11-25T00:00:00.000Z' };
    const paid = { ...note, protocol: 'mpp' as const };
    expect(toMcpResult({ type: 'success', output: { km: 1 }, mppReceipt, payment: paid })._meta).toEqual({
      'org.paymentauth/receipt': mppReceipt,
      [PAYMENT_NOTE_META_KEY]: paid,
    });
  });

  it('answers an unpaid call with the requirements in structuredContent and the hint as a second text', () => {
    expect(toMcpResult({ type: 'payment_required', challenge, hint: 'configure a wallet' })).toEqual({
      isError: true,
      structuredContent: challenge,
      content: [
        { type: 'text', text: JSON.stringify(challenge) },
        { type: 'text', text: 'configure a wallet' },
      ],
    });
  });

  it('answers a refusal with the one error body, and passes a remote error body through (text bodies wrapped)', () => {
    const refused = toMcpResult({ type: 'refused', error: new ToolError('budget_exceeded', 'over the limit') });
    expect(refused).toEqual({
      isError: true,
      content: [
        {
          type: 'text',
          text: JSON.stringify({ error: { code: 'budget_exceeded', message: 'over the limit', retryable: false } }),
        },
      ],
    });
    const body = { error: { code: 'not_found', message: 'no', retryable: false, field: 'orderId' } };
    expect(toMcpResult({ type: 'remote_error', status: 404, body })).toEqual({
      isError: true,
      content: [{ type: 'text', text: JSON.stringify(body) }],
    });
    const wrapped = toMcpResult({ type: 'remote_error', status: 502, body: 'Bad Gateway' });
    expect(JSON.parse((wrapped.content[0] as { text: string }).text)).toEqual({
      error: { code: 'remote_error', message: 'The remote answered 502: Bad Gateway', retryable: true },
    });
  });
});
