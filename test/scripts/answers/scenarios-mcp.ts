/** The MCP answers over streamable HTTP (/mcp): initialize, tools/list, and per tool unpaid, invalid, paid, replayed. */
import type { PaymentRequired } from '@x402/core/types';
import { Credential } from 'mppx';
import { headerOf, type AskedRequest, type RawAnswer } from './http.js';
import { invalidInput, validInput, type CatalogTool } from './inputs.js';
import { mppCredential } from './scenarios-http.js';
import { payableEntry, signFor, type Session } from './session.js';

const PROTOCOL_VERSION = '2025-06-18';

/** One MCP session over raw HTTP: JSON-RPC ids count up from 1 in the order of the recording. */
class McpSession {
  private nextId = 1;
  private sessionId: string | undefined;

  constructor(private readonly s: Session) {}

  /** The POST /mcp request of a JSON-RPC message, with the session's headers once it has one. */
  request(body: unknown): AskedRequest {
    const headers: Array<[string, string]> = [
      ['content-type', 'application/json'],
      ['accept', 'application/json, text/event-stream'],
    ];
    if (this.sessionId) headers.push(['mcp-session-id', this.sessionId], ['mcp-protocol-version', PROTOCOL_VERSION]);
    return { method: 'POST', path: '/mcp', headers, body: JSON.stringify(body) };
  }

  /** Sends a JSON-RPC request and records it; returns the raw answer and the JSON-RPC message it carried. */
  async call(id: string, method: string, params: unknown): Promise<{ raw: RawAnswer; message: any }> {
    const raw = await this.s.ask(id, this.request({ jsonrpc: '2.0', id: this.nextId++, method, params }));
    return { raw, message: messageOf(raw) };
  }

  /** Sends a notification and records its answer. */
  async notify(id: string, method: string): Promise<void> {
    await this.s.ask(id, this.request({ jsonrpc: '2.0', method }));
  }

  /** Opens the session: initialize, then notifications/initialized. */
  async open(id: string): Promise<void> {
    const init = await this.call(`${id}/initialize`, 'initialize', {
      protocolVersion: PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: { name: 'answers-compare', version: '1.0.0' },
    });
    this.sessionId = headerOf(init.raw, 'mcp-session-id');
    await this.notify(`${id}/initialized`, 'notifications/initialized');
  }

  /** Ends the session with DELETE /mcp. */
  async close(id: string): Promise<void> {
    if (!this.sessionId) return;
    await this.s.ask(id, {
      method: 'DELETE',
      path: '/mcp',
      headers: [
        ['mcp-session-id', this.sessionId],
        ['mcp-protocol-version', PROTOCOL_VERSION],
      ],
    });
  }
}

/** The JSON-RPC message of an answer (a JSON body, or the first `data:` line of an SSE stream). */
function messageOf(raw: RawAnswer): any {
  const text = raw.body.toString('utf8');
  const data = /^data: (.*)$/m.exec(text)?.[1] ?? text;
  try {
    return JSON.parse(data);
  } catch {
    return undefined;
  }
}

/** Every MCP answer of one paid tool: unpaid, invalid, paid with `_meta["x402/payment"]`, replayed, MPP. */
async function recordPaidTool(s: Session, mcp: McpSession, tool: CatalogTool): Promise<void> {
  const id = (what: string) => `mcp/${tool.name}/${what}`;
  const args = validInput(tool);
  const unpaid = await mcp.call(id('unpaid'), 'tools/call', { name: tool.name, arguments: args });
  await mcp.call(id('invalid'), 'tools/call', { name: tool.name, arguments: invalidInput(tool) });
  await mcp.call(id('payment-malformed'), 'tools/call', {
    name: tool.name,
    arguments: args,
    _meta: { 'x402/payment': 'not a payment' },
  });
  const challenge = unpaid.message?.result?.structuredContent as PaymentRequired | undefined;
  const payable = payableEntry(challenge?.accepts ? challenge : undefined);
  if (payable) {
    const { payload } = await signFor(s.payers.mcp, payable);
    const paid = { name: tool.name, arguments: args, _meta: { 'x402/payment': payload } };
    await mcp.call(id('paid'), 'tools/call', paid);
    await mcp.call(id('replayed'), 'tools/call', paid);
  }
  await recordMcpMpp(s, mcp, tool, args);
}

/** An MPP credential (signed over HTTP for the same tool and price) carried in `_meta`, then again. */
async function recordMcpMpp(s: Session, mcp: McpSession, tool: CatalogTool, args: Record<string, unknown>) {
  const credential = await mppCredential(s, s.payers.mcpMpp, tool, args);
  if (credential === undefined) return;
  const meta = Credential.deserialize(credential) as unknown as Record<string, unknown>;
  const call = { name: tool.name, arguments: args, _meta: { 'org.paymentauth/credential': meta } };
  await mcp.call(`mcp/${tool.name}/mpp-paid`, 'tools/call', call);
  await mcp.call(`mcp/${tool.name}/mpp-replayed`, 'tools/call', call);
}

/** Every MCP answer: session start, listing, protocol mistakes, each tool, session end. */
export async function recordMcp(s: Session, catalog: readonly CatalogTool[]): Promise<void> {
  const mcp = new McpSession(s);
  await s.ask('mcp/call-without-session', mcp.request({ jsonrpc: '2.0', id: 0, method: 'tools/list' }));
  await mcp.open('mcp/session');
  await mcp.call('mcp/tools-list', 'tools/list', {});
  await mcp.call('mcp/ping', 'ping', {});
  await mcp.call('mcp/unknown-method', 'no/such/method', {});
  await mcp.call('mcp/unknown-tool', 'tools/call', { name: 'no-such-tool', arguments: {} });
  await mcp.call('mcp/call-without-name', 'tools/call', { arguments: {} });
  for (const tool of catalog) {
    if (tool.paid) await recordPaidTool(s, mcp, tool);
    else {
      const args = tool.template.includes(':') ? { orderId: '1' } : validInput(tool);
      await mcp.call(`mcp/${tool.name}/valid`, 'tools/call', { name: tool.name, arguments: args });
      await mcp.call(`mcp/${tool.name}/invalid`, 'tools/call', { name: tool.name, arguments: invalidInput(tool) });
    }
  }
  await mcp.close('mcp/session/delete');
}
