import { mkdtempSync, rmSync } from 'node:fs';
import { get } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { silentLogger } from '../../src/shared/log.js';
import { createRuntime, listen, type RunningServer, type Runtime } from '../../src/runtime/runtime.js';
import { heldTool, type HeldTool } from '../support/held.js';
import { connectHttpClient } from '../support/mcp.js';
import { LOCAL_NETWORK, startPaidEnvironment, type PaidEnvironment } from '../support/paid.js';
import { encodePayment, signExactPayment } from '../support/payer.js';
import { decodeHeader } from '../support/server.js';

let paid: PaidEnvironment;
const dirs: string[] = [];
beforeAll(async () => {
  paid = await startPaidEnvironment(3);
}, 120_000);
afterAll(async () => {
  await paid?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function start(
  held: HeldTool,
  dataDir?: string,
): Promise<{ runtime: Runtime; running: RunningServer; dataDir: string }> {
  const dir = dataDir ?? mkdtempSync(join(tmpdir(), 'tollbooth-shutdown-'));
  if (!dataDir) dirs.push(dir);
  const runtime = await createRuntime(loadConfig({ ...paid.env, DATA_DIR: dir, LOG_LEVEL: 'silent' }), {
    log: silentLogger,
    tools: [held.tool],
  });
  return { runtime, running: await listen(runtime, 0, '127.0.0.1'), dataDir: dir };
}

async function localEntry(url: string, path: string): Promise<PaymentRequirements> {
  const probe = await fetch(url + path, { method: 'POST' });
  const challenge = decodeHeader(probe.headers.get('payment-required')) as PaymentRequired;
  return challenge.accepts.find((a) => a.network === LOCAL_NETWORK)!;
}

function pay(url: string, path: string, payment: unknown) {
  return fetch(url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'payment-signature': encodePayment(payment) },
    body: '{}',
  });
}

/** A request on a new connection: resolves its status, or the connection error's code. */
function freshRequest(url: string): Promise<number | string> {
  return new Promise((resolve) => {
    get(url + '/healthz', { agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    }).on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
}

describe('graceful shutdown of the HTTP server', () => {
  it('refuses new connections, lets the running paid call finish and settle once, then stops', async () => {
    const held = heldTool('held-a');
    const { runtime, running } = await start(held);
    const payer = paid.payers[0]!;
    const before = await paid.balance(payer.address);
    const payment = await signExactPayment(payer, await localEntry(running.url, '/api/test/held-a'));
    const began = held.started();
    const call = pay(running.url, '/api/test/held-a', payment);
    await began;

    const stopping = running.shutdown(30_000);
    expect(await freshRequest(running.url)).toBe('ECONNREFUSED');
    held.release();
    const res = await call;
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ done: true });
    expect((decodeHeader(res.headers.get('payment-response')) as { success: boolean }).success).toBe(true);
    expect(await stopping).toBe(true);
    expect(runtime.calls.inFlight).toBe(0);
    expect(await paid.balance(payer.address)).toBe(before - 1000n);
    expect(await runtime.store.ledger.listReceipts()).toMatchObject([
      { tool: 'held-a', status: 'settled', payer: payer.address },
    ]);
    await runtime.close();
  });

  it('answers 503 shutting_down to a request arriving on an open connection while it drains', async () => {
    const held = heldTool('held-b');
    const { runtime, running } = await start(held);
    const payment = encodePayment(
      await signExactPayment(paid.payers[1]!, await localEntry(running.url, '/api/test/held-b')),
    );
    const socket = connect(running.port, '127.0.0.1');
    let received = '';
    socket.on('data', (chunk: Buffer) => void (received += chunk.toString('latin1')));
    const ended = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    const began = held.started();
    socket.write(
      `POST /api/test/held-b HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nPayment-Signature: ${payment}\r\nContent-Length: 2\r\n\r\n{}`,
    );
    await began;

    const stopping = running.shutdown(30_000);
    // The second request reaches the server while the first still runs; the first finishes only after that.
    const arrived = new Promise<void>((resolve) =>
      running.server.on('request', (req: { url?: string }) => req.url === '/healthz' && resolve()),
    );
    socket.write('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    await arrived;
    held.release();
    await ended;
    const statuses = [...received.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((m) => Number(m[1]));
    expect(statuses).toEqual([200, 503]);
    expect(received).toContain('"code":"shutting_down"');
    expect(await stopping).toBe(true);
    await runtime.close();
  });

  it('aborts a call that outlives the time limit: nothing is settled and the payment stays usable', async () => {
    const held = heldTool('held-c', 'aborted');
    const { runtime, running, dataDir } = await start(held);
    const payer = paid.payers[2]!;
    const before = await paid.balance(payer.address);
    const payment = await signExactPayment(payer, await localEntry(running.url, '/api/test/held-c'));
    const began = held.started();
    const call = pay(running.url, '/api/test/held-c', payment).then(
      (res) => res.status,
      () => 'connection closed',
    );
    await began;

    expect(await running.shutdown(100)).toBe(false);
    expect(await call).toBe('connection closed');
    expect(runtime.calls.inFlight).toBe(0);
    await runtime.close();
    expect(await paid.balance(payer.address)).toBe(before);

    held.release();
    const again = await start(held, dataDir);
    const res = await pay(again.running.url, '/api/test/held-c', payment);
    expect(res.status).toBe(200);
    expect(await paid.balance(payer.address)).toBe(before - 1000n);
    await again.running.close();
    await again.runtime.close();
  });

  it('does not wait for idle MCP sessions: their event streams end and the sessions close', async () => {
    const held = heldTool('held-d');
    const { runtime, running } = await start(held);
    const client = await connectHttpClient(running.url);
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('held-d');
    const sessionId = (client.transport as { sessionId?: string }).sessionId!;
    const stream = await fetch(running.url + '/mcp', {
      headers: { accept: 'text/event-stream', 'mcp-session-id': sessionId, 'mcp-protocol-version': '2025-06-18' },
    });
    // One standalone event stream per session: this one, or the client's own (then this GET is refused with 409).
    expect([200, 409]).toContain(stream.status);

    expect(await running.shutdown(20_000)).toBe(true);
    if (stream.status === 200) await expect(stream.text()).resolves.toBeTypeOf('string');
    await expect(client.listTools()).rejects.toThrow();
    await client.close();
    await runtime.close();
  });
});
