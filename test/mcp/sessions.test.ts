import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, type AnyToolDefinition } from '../../src/tool/tool.js';
import { connectHttpClient } from '../support/mcp.js';
import { startTestServer, type TestServer } from '../support/server.js';

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const INIT = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'sessions-test', version: '1' } },
});

/** A free tool whose calls stay in flight until the test releases them. */
function heldFreeTool() {
  let release: () => void = () => {};
  const released = new Promise<void>((resolve) => (release = resolve));
  let running = 0;
  const tool = defineTool({
    name: 'held',
    title: 'held',
    description: 'Free test tool held open by the test.',
    group: 'tools',
    method: 'POST',
    path: '/api/test/held',
    input: z.object({}),
    output: z.object({ done: z.boolean() }),
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    handler: async () => {
      running += 1;
      await released;
      return { done: true };
    },
  }) as AnyToolDefinition;
  return { tool, release: () => release(), running: () => running };
}

/** Waits until `condition` holds (checked every 10 ms); the test's own timeout bounds the wait. */
async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await condition())) await new Promise((r) => setTimeout(r, 10));
}

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(env: Record<string, string>, tools?: readonly AnyToolDefinition[]): Promise<TestServer> {
  server = await startTestServer({ TRUST_PROXY: 'loopback', ...env }, tools ? { tools } : {});
  return server;
}

let addresses = 0;
/** A client address of its own (the servers trust X-Forwarded-For from loopback), so the per-client cap stays out of the way. */
const anotherClient = () => `198.51.100.${++addresses % 250}`;

/** POSTs an initialize from `from` (forwarded); resolves the response with its body read. */
async function initialize(url: string, from = anotherClient()) {
  const res = await fetch(`${url}/mcp`, {
    method: 'POST',
    headers: { ...HEADERS, 'x-forwarded-for': from },
    body: INIT,
  });
  return { res, text: await res.text(), id: res.headers.get('mcp-session-id') ?? '' };
}

/** Opens a session and returns its id (fails the test when the initialize is refused). */
async function open(url: string, from = anotherClient()): Promise<string> {
  const { res, id } = await initialize(url, from);
  expect(res.status).toBe(200);
  return id;
}

/** Sends one JSON-RPC request in a session; the promise resolves once its whole answer has arrived. */
async function rpc(url: string, session: string, method: string, params: unknown = {}) {
  const res = await fetch(`${url}/mcp`, {
    method: 'POST',
    headers: { ...HEADERS, 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 2, method, params }),
  });
  return { status: res.status, text: await res.text(), headers: res.headers };
}

async function metric(s: TestServer, name: string, labels: Record<string, string> = {}): Promise<number> {
  const values = (await s.runtime.metrics.registry.getSingleMetric(name)?.get())?.values ?? [];
  const found = values.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l));
  return found?.value ?? 0;
}

describe('bounded MCP sessions on /mcp', () => {
  it('ends the least recently used idle session when the total cap is reached, and its id then gets 404', async () => {
    const s = await start({ MCP_MAX_SESSIONS: '2' });
    const first = await open(s.url);
    const second = await open(s.url);
    expect((await rpc(s.url, second, 'tools/list')).status).toBe(200);
    const third = await open(s.url);
    expect(third).not.toBe('');

    const evicted = await rpc(s.url, first, 'tools/list');
    expect(evicted.status).toBe(404);
    const body = JSON.parse(evicted.text);
    expect(body.error.code).toBe(-32001);
    expect(body.error.data.code).toBe('mcp_session_not_found');
    expect(body.error.message).toMatch(/initialize/);
    expect((await rpc(s.url, second, 'tools/list')).status).toBe(200);
    expect((await rpc(s.url, third, 'tools/list')).status).toBe(200);
    expect(await metric(s, 'tollbooth_mcp_sessions_open')).toBe(2);
    expect(await metric(s, 'tollbooth_mcp_sessions_ended_total', { reason: 'evicted' })).toBe(1);
  });

  it('never evicts a session with a call in flight, and refuses with 503 and Retry-After when every session is busy', async () => {
    const held = heldFreeTool();
    const s = await start({ MCP_MAX_SESSIONS: '2' }, [held.tool]);
    const busy = await open(s.url);
    const busyCall = rpc(s.url, busy, 'tools/call', { name: 'held', arguments: {} });
    await until(() => held.running() === 1);
    const idle = await open(s.url);
    expect((await rpc(s.url, idle, 'tools/list')).status).toBe(200);

    // The busy session is the least recently used, yet the idle one makes room.
    const third = await open(s.url);
    expect((await rpc(s.url, idle, 'tools/list')).status).toBe(404);
    const thirdCall = rpc(s.url, third, 'tools/call', { name: 'held', arguments: {} });
    await until(() => held.running() === 2);

    const refused = await initialize(s.url);
    expect(refused.res.status).toBe(503);
    expect(Number(refused.res.headers.get('retry-after'))).toBeGreaterThan(0);
    const body = JSON.parse(refused.text);
    expect(body).toMatchObject({ jsonrpc: '2.0', id: 1, error: { code: -32000 } });
    expect(body.error.data).toMatchObject({ code: 'mcp_sessions_full', retryable: true });
    expect(body.error.message).toMatch(/call in flight/);

    held.release();
    for (const call of [await busyCall, await thirdCall]) {
      expect(call.status).toBe(200);
      expect(call.text).toContain('"done":true');
    }
    expect((await rpc(s.url, busy, 'tools/list')).status).toBe(200);
    expect((await initialize(s.url)).res.status).toBe(200);
  });

  it("keeps a client within its own cap by ending its own least recently used idle session, never another client's", async () => {
    const s = await start({ MCP_MAX_SESSIONS: '10', MCP_MAX_SESSIONS_PER_CLIENT: '2' });
    const other = await open(s.url, '203.0.113.8');
    const oldest = await open(s.url, '203.0.113.7');
    const newer = await open(s.url, '203.0.113.7');
    const third = await open(s.url, '203.0.113.7');
    expect((await rpc(s.url, oldest, 'tools/list')).status).toBe(404);
    for (const id of [other, newer, third]) expect((await rpc(s.url, id, 'tools/list')).status).toBe(200);

    // Clients are counted as the per-IP limit counts them: the addresses of one IPv6 /64 are one client.
    const first = await open(s.url, '2001:db8::1');
    await open(s.url, '2001:db8::2');
    await open(s.url, '2001:db8::3');
    expect((await rpc(s.url, first, 'tools/list')).status).toBe(404);
    expect(await metric(s, 'tollbooth_mcp_sessions_ended_total', { reason: 'evicted' })).toBe(2);
    expect(await metric(s, 'tollbooth_mcp_sessions_open')).toBe(5);
  });

  it('refuses a client whose sessions at its cap all have a call in flight with 429 and Retry-After', async () => {
    const held = heldFreeTool();
    const s = await start({ MCP_MAX_SESSIONS: '10', MCP_MAX_SESSIONS_PER_CLIENT: '2' }, [held.tool]);
    const calls = [];
    for (const id of [await open(s.url, '203.0.113.7'), await open(s.url, '203.0.113.7')])
      calls.push(rpc(s.url, id, 'tools/call', { name: 'held', arguments: {} }));
    await until(() => held.running() === 2);

    const refused = await initialize(s.url, '203.0.113.7');
    expect(refused.res.status).toBe(429);
    expect(Number(refused.res.headers.get('retry-after'))).toBeGreaterThan(0);
    const body = JSON.parse(refused.text);
    expect(body).toMatchObject({ jsonrpc: '2.0', id: 1, error: { code: -32000 } });
    expect(body.error.data).toMatchObject({ code: 'mcp_session_limit', retryable: true, details: { held: 2 } });
    expect(body.error.message).toMatch(/call in flight/);
    expect(body.error.message).toMatch(/DELETE \/mcp/);
    expect((await initialize(s.url, '203.0.113.8')).res.status).toBe(200);

    held.release();
    for (const call of calls) expect((await call).text).toContain('"done":true');
    expect((await initialize(s.url, '203.0.113.7')).res.status).toBe(200);
  });

  it('ends sessions idle past MCP_SESSION_IDLE_MS, but not one whose call is still running', async () => {
    const held = heldFreeTool();
    const s = await start({ MCP_SESSION_IDLE_MS: '200' }, [held.tool]);
    const busy = await open(s.url);
    const call = rpc(s.url, busy, 'tools/call', { name: 'held', arguments: {} });
    await until(() => held.running() === 1);
    const idle = await open(s.url);
    await until(async () => (await metric(s, 'tollbooth_mcp_sessions_ended_total', { reason: 'expired' })) === 1);
    expect(await metric(s, 'tollbooth_mcp_sessions_open')).toBe(1);
    expect((await rpc(s.url, idle, 'tools/list')).status).toBe(404);
    held.release();
    const answer = await call;
    expect(answer.status).toBe(200);
    expect(answer.text).toContain('"done":true');
  });

  it('lets an official SDK client whose session was evicted see 404 and start a new session', async () => {
    const s = await start({ MCP_MAX_SESSIONS: '1' });
    const client = await connectHttpClient(s.url);
    await client.listTools();
    await open(s.url);
    await expect(client.listTools()).rejects.toMatchObject({ code: 404 });
    await client.close().catch(() => {});

    const again = new Client({ name: 'tollbooth-test', version: '1.0.0' });
    await again.connect(new StreamableHTTPClientTransport(new URL('/mcp', s.url)));
    expect((await again.listTools()).tools.length).toBeGreaterThan(0);
    await again.close();
  });
});
