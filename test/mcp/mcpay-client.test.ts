import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
// mcpay 0.1.17's `mcpay/client` entry re-exports `./client/with-x402-client` without a file extension, which Node's ESM
// loader refuses; the module behind it (the published code, unchanged) is imported directly.
import { withX402Client } from '../../node_modules/mcpay/dist/client/with-x402-client.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnyToolDefinition } from '../../src/tool/tool.js';
import { startBaseEnvironment, type BaseEnvironment } from '../support/chain/permit2-env.js';
import { countingTools } from '../support/paid.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { v1Echo } from '../support/tools.js';

/**
 * `mcpay` (npm, pinned in devDependencies) is a published MCP payment client: `withX402Client` reads an unpaid
 * result from `_meta["x402/error"]`, pays its first `exact` option with the x402 version-1 client library, and
 * calls again with the payment (base64) in `_meta["x402/payment"]`. It speaks version 1 only, so it pays a tool
 * of the version-1 group; it settles for real on a local chain answering as Base (chain 8453).
 */

let base: BaseEnvironment;
let server: TestServer;
let runs: Map<string, number>;
const clients: Client[] = [];

beforeAll(async () => {
  base = await startBaseEnvironment(2);
  const counted = countingTools([v1Echo] as AnyToolDefinition[]);
  runs = counted.runs;
  server = await startTestServer(base.env, { tools: counted.tools });
}, 120_000);
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await server?.close();
  await base?.stop();
});

async function mcpayClient(payer: BaseEnvironment['payers'][number]): Promise<Client> {
  const client = new Client({ name: 'mcpay-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL('/mcp', server.url)));
  clients.push(client);
  return withX402Client(client as never, { wallet: { evm: payer as never }, version: 1 }) as unknown as Client;
}

describe('a published MCP payment client (mcpay withX402Client) pays a tool', () => {
  it('finds the requirements in _meta["x402/error"], pays once, and gets the output with the receipt', async () => {
    const payer = base.payers[0]!;
    const client = await mcpayClient(payer);
    const before = { payer: await base.balance(payer.address), payTo: await base.balance(base.payTo) };

    const result = await client.callTool({ name: 'v1-echo', arguments: { note: 'paid by mcpay' } });

    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ note: 'paid by mcpay' });
    expect(result._meta?.['x402/payment-response']).toMatchObject({
      success: true,
      network: 'base',
      payer: payer.address,
      transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/),
    });
    expect(runs.get('v1-echo')).toBe(1);
    expect(await base.balance(payer.address)).toBe(before.payer - 1000n);
    expect(await base.balance(base.payTo)).toBe(before.payTo + 1000n);
  });

  it('sees the unpaid result where it looks: _meta["x402/error"] with accepts, resource mcp://tool/<name>', async () => {
    const plain = new Client({ name: 'plain', version: '1.0.0' });
    await plain.connect(new StreamableHTTPClientTransport(new URL('/mcp', server.url)));
    clients.push(plain);
    const unpaid = await plain.callTool({ name: 'v1-echo', arguments: { note: 'x' } });
    expect(unpaid.isError).toBe(true);
    const error = unpaid._meta?.['x402/error'] as {
      x402Version: number;
      accepts: Array<{ resource: string; maxAmountRequired: string }>;
      code: number;
      message: string;
    };
    expect(error).toMatchObject({
      x402Version: 1,
      code: 402,
      accepts: [{ resource: 'mcp://tool/v1-echo', maxAmountRequired: '1000' }],
    });
    // The PaymentRequired itself plus code and message: no fourth copy of the challenge under `data`.
    const { code: _code, message: _message, ...paymentRequired } = error;
    expect(paymentRequired).toEqual(unpaid.structuredContent);
    expect(error).not.toHaveProperty('data');
    expect(runs.get('v1-echo')).toBe(1);
  });
});
