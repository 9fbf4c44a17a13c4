import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { loadConfig } from '../../src/config/config.js';
import { silentLogger } from '../../src/shared/log.js';
import { createRuntime, listen, type Runtime, type RunningServer } from '../../src/runtime/runtime.js';
import { defineTool, type AnyToolDefinition } from '../../src/tool/tool.js';
import { passwordStrength } from '../../tools/password-strength.js';
import { connectHttpClient } from '../support/mcp.js';
import { LOCAL_NETWORK, startPaidEnvironment, type PaidEnvironment } from '../support/paid.js';
import { encodePayment, signExactPayment } from '../support/payer.js';

/** A paid tool whose answer is over the output size limit (1 MiB of JSON). */
const hugeAnswer = defineTool({
  name: 'huge-answer',
  title: 'Huge answer',
  description: 'Test tool: answers more than the output size limit.',
  group: 'tools',
  method: 'POST',
  path: '/api/test/huge-answer',
  input: z.object({}),
  output: z.object({ text: z.string() }),
  pricing: { usd: '0.001', accepts: 'every-network' },
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  handler: () => ({ text: 'x'.repeat(1024 * 1024 + 1) }),
});

let paid: PaidEnvironment;
let runtime: Runtime;
let server: RunningServer;
let dir: string;
const PRICE = 1000n;

beforeAll(async () => {
  paid = await startPaidEnvironment(2);
  dir = mkdtempSync(join(tmpdir(), 'tollbooth-workers-'));
  // One thread and one waiting call per tool; jobs stopped after 20 s (a cold worker's start-up counts, and CI machines are slow). The worker entry blocks on a gate file.
  const config = loadConfig({
    ...paid.env,
    DATA_DIR: dir,
    LOG_LEVEL: 'silent',
    WORKER_THREADS_PER_TOOL: '1',
    WORKER_QUEUE_PER_TOOL: '1',
    WORKER_JOB_TIMEOUT_MS: '20000',
  });
  const entry = {
    filename: new URL('../support/gated-worker.ts', import.meta.url).href,
    execArgv: ['--import', 'tsx'],
  };
  runtime = await createRuntime(config, {
    log: silentLogger,
    tools: [passwordStrength, hugeAnswer] as AnyToolDefinition[],
    workerEntry: entry,
  });
  server = await listen(runtime, 0, '127.0.0.1');
}, 120_000);
afterAll(async () => {
  await server?.close();
  await runtime?.close();
  await paid?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

async function signFor(path: string, payer = 0): Promise<PaymentPayload> {
  const res = await fetch(server.url + path, { method: 'POST' });
  const challenge = JSON.parse(
    Buffer.from(res.headers.get('payment-required') ?? '', 'base64').toString('utf8'),
  ) as PaymentRequired;
  const entry = challenge.accepts.find((a) => a.network === LOCAL_NETWORK) as PaymentRequirements;
  return signExactPayment(paid.payers[payer]!, entry);
}

function call(path: string, body: unknown, payment: PaymentPayload) {
  return fetch(server.url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'payment-signature': encodePayment(payment) },
    body: JSON.stringify(body),
  });
}

const checkPassword = (password: string, payment: PaymentPayload) =>
  call('/api/password-strength', { password }, payment);
const lane = () => runtime.serverDeps.workers!.stats('password-strength');
/** Claims in flight (not released, not settled), whatever their age. */
const claims = () => runtime.store.ledger.listStaleClaims(new Date(Date.now() + 3_600_000).toISOString());
const nonceOf = (payment: PaymentPayload) =>
  String((payment.payload as { authorization: { nonce: string } }).authorization.nonce).toLowerCase();

async function until(condition: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 3000; i++) {
    if (await condition()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`gave up waiting until ${what}`);
}

describe('tools whose cost grows with their input, on worker threads', () => {
  it('answers /healthz while a paid call blocks its worker, and refuses a call beyond the queue before reading its payment', async () => {
    const gate = join(dir, 'gate-open');
    const before = await paid.balance(paid.payers[0]!.address);
    const [first, second, third] = await Promise.all([1, 2, 3].map(() => signFor('/api/password-strength')));
    let firstDone = false;
    const running = checkPassword(`gate:${gate}|first`, first!).then((res) => {
      firstDone = true;
      return res;
    });
    await until(() => lane().running === 1, 'the first job runs on its worker');
    // The worker thread is blocked until the gate opens; the event loop is not.
    const health = await fetch(server.url + '/healthz');
    expect(health.status).toBe(200);
    expect(firstDone).toBe(false);

    const waiting = checkPassword(`gate:${gate}|second`, second!);
    await until(async () => lane().admitted === 2 && (await claims()).length === 2, 'the second call waits, claimed');
    const refused = await checkPassword('correct horse battery staple', third!);
    expect(refused.status).toBe(503);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(refused.headers.get('payment-required')).toBeNull();
    const body = (await refused.json()) as { error: { code: string; retryable: boolean } };
    expect(body.error).toMatchObject({ code: 'tool_busy', retryable: true });
    const metrics = await (await fetch(server.url + '/metrics')).text();
    expect(metrics).toContain('tollbooth_tool_worker_calls{tool="password-strength",state="admitted"} 2');
    expect(metrics).toContain('tollbooth_tool_worker_calls{tool="password-strength",state="running"} 1');
    // MCP answers the same refusal as an error result, also before reading the payment.
    const mcp = await connectHttpClient(server.url);
    const viaMcp = await mcp.callTool({
      name: 'password-strength',
      arguments: { password: 'correct horse battery staple' },
      _meta: { 'x402/payment': encodePayment(third!) },
    });
    await mcp.close();
    expect(viaMcp.isError).toBe(true);
    expect(JSON.stringify(viaMcp.content)).toContain('tool_busy');
    // Nothing was claimed for the refused call: only the two admitted ones hold claims.
    const held = await claims();
    expect(held).toHaveLength(2);
    expect(held.some((c) => c.replayKey.toLowerCase().includes(nonceOf(third!)))).toBe(false);

    writeFileSync(gate, '');
    expect((await running).status).toBe(200);
    expect((await waiting).status).toBe(200);
    // The refused payment was never used: it now buys the call.
    const again = await checkPassword('correct horse battery staple', third!);
    expect(again.status).toBe(200);
    expect(await claims()).toEqual([]);
    expect(lane()).toEqual({ admitted: 0, running: 0 });
    // Three calls ran and were charged once each; the refusal charged nothing.
    expect(before - (await paid.balance(paid.payers[0]!.address))).toBe(3n * PRICE);
  });

  it('fails a call whose worker crashes, charges nothing, and the same payment then buys a call', async () => {
    const payer = paid.payers[1]!.address;
    const before = await paid.balance(payer);
    const payment = await signFor('/api/password-strength', 1);
    const crashed = await checkPassword('crash', payment);
    expect(crashed.status).toBe(500);
    expect(((await crashed.json()) as { error: { code: string } }).error.code).toBe('internal');
    expect(await claims()).toEqual([]);
    expect(await paid.balance(payer)).toBe(before);
    const retried = await checkPassword('Tr0ub4dour&3', payment);
    expect(retried.status).toBe(200);
    expect(((await retried.json()) as { score: number }).score).toBeGreaterThanOrEqual(0);
    expect(before - (await paid.balance(payer))).toBe(PRICE);
  });

  it('stops a job past its time limit by terminating its worker, uncharged', async () => {
    const payer = paid.payers[1]!.address;
    const before = await paid.balance(payer);
    const payment = await signFor('/api/password-strength', 1);
    const stopped = await checkPassword('spin', payment);
    expect(stopped.status).toBe(500);
    expect(((await stopped.json()) as { error: { message: string } }).error.message).toMatch(
      /did not finish within 20/,
    );
    expect(await claims()).toEqual([]);
    expect(await paid.balance(payer)).toBe(before);
    // The lane works on with a fresh worker.
    expect((await checkPassword('password', payment)).status).toBe(200);
  });

  it('refuses an answer over the output size limit before settlement: 422 output_too_large, nothing charged', async () => {
    const payer = paid.payers[1]!.address;
    const before = await paid.balance(payer);
    const res = await call('/api/test/huge-answer', {}, await signFor('/api/test/huge-answer', 1));
    expect(res.status).toBe(422);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('output_too_large');
    expect(await claims()).toEqual([]);
    expect(await paid.balance(payer)).toBe(before);
  });
});
