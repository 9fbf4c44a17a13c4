import { afterEach, describe, expect, it } from 'vitest';
import { collectAfterTurnover } from '../../src/mcp/memory-hint.js';
import { startTestServer, type TestServer } from '../support/server.js';

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const INIT = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'memory-hint-test', version: '1' } },
});

/** Lets the event loop run the callbacks `setImmediate` queued so far. */
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

type Global = { gc?: unknown };
const exposedGc = (globalThis as Global).gc;
let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
  (globalThis as Global).gc = exposedGc;
});

describe('the collection after a turnover of MCP sessions', () => {
  it('runs once each time as many sessions have been ended as the table holds, on a later turn of the event loop', async () => {
    let runs = 0;
    const ended = collectAfterTurnover(3, () => runs++);
    ended();
    ended();
    await nextTurn();
    expect(runs).toBe(0);
    ended();
    expect(runs).toBe(0);
    await nextTurn();
    expect(runs).toBe(1);
    for (let i = 0; i < 6; i++) ended();
    await nextTurn();
    expect(runs).toBe(2);
  });

  it('really collects garbage, also in a process started without --expose-gc', async () => {
    delete (globalThis as Global).gc;
    // A large array lives in V8's large-object space, which only a full collection empties; nothing else holds it.
    const ref = new WeakRef(new Array<number>(300_000).fill(1));
    await nextTurn();
    collectAfterTurnover(1)();
    await nextTurn();
    expect(ref.deref()).toBeUndefined();
  });

  it('is run by /mcp after as many sessions as MCP_MAX_SESSIONS were evicted to make room', async () => {
    let runs = 0;
    (globalThis as Global).gc = () => runs++;
    server = await startTestServer({ TRUST_PROXY: 'loopback', MCP_MAX_SESSIONS: '2' });
    const open = async (i: number) => {
      const res = await fetch(`${server!.url}/mcp`, {
        method: 'POST',
        headers: { ...HEADERS, 'x-forwarded-for': `198.51.100.${i}` },
        body: INIT,
      });
      await res.text();
      expect(res.status).toBe(200);
    };
    for (let i = 1; i <= 3; i++) await open(i);
    await nextTurn();
    expect(runs).toBe(0);
    await open(4);
    await nextTurn();
    expect(runs).toBe(1);
  });
});
