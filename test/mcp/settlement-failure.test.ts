import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { PaymentRequirements } from '@x402/core/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { createRuntime, listen, type RunningServer, type Runtime } from '../../src/runtime/runtime.js';
import { silentLogger } from '../../src/shared/log.js';
import type { AnyToolDefinition } from '../../src/tool/tool.js';
import { annuity } from '../../tools/annuity.js';
import { connectHttpClient } from '../support/mcp.js';
import { countingTools, LOCAL_NETWORK, startPaidEnvironment, type PaidEnvironment } from '../support/paid.js';
import { signExactPayment } from '../support/payer.js';

const REASON = 'invalid_exact_evm_insufficient_balance';
const input = { payment: 100, ratePerPeriod: 0.05, periods: 10 };

let paid: PaidEnvironment;
let runtime: Runtime;
let server: RunningServer;
let client: Client;
let runs: Map<string, number>;
let dir: string;
beforeAll(async () => {
  paid = await startPaidEnvironment(1);
  dir = mkdtempSync(join(tmpdir(), 'tollbooth-mcp-settle-'));
  // The facilitator thread reads the variable when it starts: every settlement then fails with REASON.
  process.env.TOLLBOOTH_TEST_SETTLE_ERROR = REASON;
  const counted = countingTools([annuity] as AnyToolDefinition[]);
  runs = counted.runs;
  runtime = await createRuntime(loadConfig({ ...paid.env, DATA_DIR: dir, LOG_LEVEL: 'silent' }), {
    log: silentLogger,
    tools: counted.tools,
    facilitatorEntry: {
      filename: new URL('../support/hooked-facilitator-worker.ts', import.meta.url).href,
      execArgv: ['--import', 'tsx'],
    },
  });
  server = await listen(runtime, 0, '127.0.0.1');
  client = await connectHttpClient(server.url);
}, 120_000);
afterAll(async () => {
  delete process.env.TOLLBOOTH_TEST_SETTLE_ERROR;
  await client?.close();
  await server?.close();
  await paid?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('an MCP call whose settlement fails after the tool ran', () => {
  it('is an isError payment error carrying the failed settle response in _meta, charging nothing', async () => {
    const unpaid = await client.callTool({ name: 'annuity', arguments: input });
    const accepts = (unpaid.structuredContent as { accepts: PaymentRequirements[] }).accepts;
    const entry = accepts.find((a) => a.network === LOCAL_NETWORK)!;
    const payer = paid.payers[0]!;
    const before = await paid.balance(payer.address);
    const payment = await signExactPayment(payer, entry);

    const result = await client.callTool({ name: 'annuity', arguments: input, _meta: { 'x402/payment': payment } });

    expect(result.isError).toBe(true);
    expect(runs.get('annuity')).toBe(1);
    expect(result._meta?.['x402/payment-response']).toEqual({
      success: false,
      errorReason: REASON,
      payer: payer.address,
      transaction: '',
      network: LOCAL_NETWORK,
    });
    expect(result.structuredContent).toMatchObject({ x402Version: 2, accepts: expect.any(Array) });
    // The tool's output is withheld, and the facilitator's own words never reach the caller.
    expect(JSON.stringify(result)).not.toContain('"monthlyPayment"');
    expect(JSON.stringify(result)).not.toContain('node rpc-7');
    expect(await paid.balance(payer.address)).toBe(before);
    expect(await runtime.store.ledger.listReceipts()).toMatchObject([
      { tool: 'annuity', status: 'failed', errorReason: REASON, transaction: '', transport: 'mcp' },
    ]);
  });
});
