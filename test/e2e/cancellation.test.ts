import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { heldTool, startHoldingProxy } from '../support/held.js';
import { connectHttpClient } from '../support/mcp.js';
import { LOCAL_NETWORK, startPaidEnvironment, type PaidEnvironment } from '../support/paid.js';
import { encodePayment, signExactPayment } from '../support/payer.js';
import { startTestServer } from '../support/server.js';
import { spawnStdio } from '../support/spawn.js';
import { startHyperliquidLookalike } from '../support/upstreams/hyperliquid.js';

let paid: PaidEnvironment;
beforeAll(async () => {
  paid = await startPaidEnvironment(2);
}, 120_000);
afterAll(async () => {
  await paid?.stop();
});

async function localEntry(client: Client, name: string, args: Record<string, unknown>): Promise<PaymentRequirements> {
  const unpaid = await client.callTool({ name, arguments: args });
  return (unpaid.structuredContent as unknown as PaymentRequired).accepts.find((a) => a.network === LOCAL_NETWORK)!;
}

/** Calls a tool with a payment and an abort signal; resolves how the client saw the call end. */
function cancellableCall(
  client: Client,
  name: string,
  args: Record<string, unknown>,
  payment: unknown,
  signal: AbortSignal,
) {
  return client.callTool({ name, arguments: args, _meta: { 'x402/payment': payment } }, undefined, { signal }).then(
    (result) => ({ answered: result }),
    (err: Error) => ({ failed: err.message }),
  );
}

describe('MCP notifications/cancelled for a paid call in flight', () => {
  it('over streamable HTTP: the handler finishes but nothing settles, and the payment stays usable', async () => {
    const held = heldTool('held-cancel', 'aborted');
    const server = await startTestServer(paid.env, { tools: [held.tool] });
    const client = await connectHttpClient(server.url);
    try {
      const payer = paid.payers[0]!;
      const before = await paid.balance(payer.address);
      const payment = await signExactPayment(payer, await localEntry(client, 'held-cancel', {}));
      const controller = new AbortController();
      const began = held.started();
      const call = cancellableCall(client, 'held-cancel', {}, payment, controller.signal);
      await began;
      controller.abort();
      expect(await call).toEqual({ failed: expect.stringContaining('AbortError') });

      // The handler returns only once the cancellation reached it; then the pipeline must release, not settle.
      expect(await server.runtime.calls.drain(30_000)).toBe(true);
      expect(held.finished).toBe(1);
      expect(await paid.balance(payer.address)).toBe(before);
      const metrics = await server.runtime.metrics.registry.getSingleMetricAsString('tollbooth_paid_calls_total');
      expect(metrics).toContain('tool="held-cancel",network="eip155:84532",protocol="x402",outcome="error"} 1');
      expect(metrics).not.toContain('outcome="settled"');

      held.release();
      const retried = await fetch(server.url + '/api/test/held-cancel', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'payment-signature': encodePayment(payment) },
        body: '{}',
      });
      expect(retried.status).toBe(200);
      expect(await paid.balance(payer.address)).toBe(before - 1000n);
    } finally {
      await client.close();
      await server.close();
    }
  });

  it('over stdio: the upstream request is abandoned, nothing settles, and the same payment then pays once', async () => {
    const hyperliquid = await startHyperliquidLookalike();
    const proxy = await startHoldingProxy(
      hyperliquid.url,
      (body) => (body as { type?: unknown } | undefined)?.type === 'candleSnapshot',
    );
    const dataDir = mkdtempSync(join(tmpdir(), 'tollbooth-cancel-'));
    const stdio = await spawnStdio({
      ...paid.env,
      HYPERLIQUID_API_URL: proxy.url,
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
    });
    try {
      const args = { coin: 'ETH', interval: '1h', limit: 3 };
      const payer = paid.payers[1]!;
      const before = await paid.balance(payer.address);
      const entry = await localEntry(stdio.client, 'perp-klines', args);
      const payment = await signExactPayment(payer, entry);
      const controller = new AbortController();
      const held = proxy.held();
      const abandoned = proxy.abandoned();
      const call = cancellableCall(stdio.client, 'perp-klines', args, payment, controller.signal);
      await held;
      controller.abort();
      expect(await call).toEqual({ failed: expect.stringContaining('AbortError') });
      await abandoned;
      proxy.release();

      // Until the cancelled call has released its claim, the same payment is "in flight"; then it pays exactly once.
      let retried = await stdio.client.callTool({
        name: 'perp-klines',
        arguments: args,
        _meta: { 'x402/payment': payment },
      });
      while ((retried.structuredContent as { error?: string } | undefined)?.error === 'payment_in_flight') {
        await new Promise((resolve) => setTimeout(resolve, 50));
        retried = await stdio.client.callTool({
          name: 'perp-klines',
          arguments: args,
          _meta: { 'x402/payment': payment },
        });
      }
      expect(retried.isError).toBeFalsy();
      expect((retried.structuredContent as { count: number }).count).toBe(3);
      expect(await paid.balance(payer.address)).toBe(before - BigInt(entry.amount));
    } finally {
      await stdio.stop();
      await proxy.stop();
      await hyperliquid.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
