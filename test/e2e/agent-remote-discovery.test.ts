import { rmSync } from 'node:fs';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentDataDir, errorOf, runCli, spawnAgent, type AgentProcess } from '../support/agent.js';
import { startOfficialSeller, type OfficialSeller } from '../support/official-seller.js';
import { LOCAL_NETWORK, startPaidEnvironment, type PaidEnvironment } from '../support/paid.js';
import { startRestSeller, type RestSeller } from '../support/rest-seller.js';
import { startX402Catalog, x402Document, type X402Catalog } from '../support/x402-catalog.js';

const PRICE = 1000n;
const payTo = privateKeyToAccount(generatePrivateKey()).address;

let paid: PaidEnvironment;
let seller: OfficialSeller;
let catalog: X402Catalog;
let openApiCatalog: X402Catalog;
let rest: RestSeller;
const dirs: string[] = [];
const agents: AgentProcess[] = [];

beforeAll(async () => {
  paid = await startPaidEnvironment(6);
  seller = await startOfficialSeller(paid, payTo);
  rest = await startRestSeller(paid, payTo);
  catalog = await startX402Catalog(
    x402Document([
      {
        resource: `${seller.url}/quote`,
        method: 'GET',
        name: 'quote',
        description: 'A quote (third-party seller)',
        inputSchema: { type: 'object', properties: { topic: { type: 'string' } } },
        price: { usd: '0.001', currency: 'USD' },
      },
    ]),
  );
  openApiCatalog = await startX402Catalog(openApi(seller.url, '0.001'), '/openapi.json');
}, 120_000);
afterAll(async () => {
  await Promise.all(agents.map((a) => a.close().catch(() => undefined)));
  await catalog?.close();
  await openApiCatalog?.close();
  await rest?.close();
  await seller?.close();
  await paid?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** The seller's one route as a third party documents it for x402scan: OpenAPI 3.1, `x-payment-info`, a `$ref`. */
function openApi(sellerUrl: string, price: string): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: { title: 'Quotes', version: '1.0.0' },
    servers: [{ url: sellerUrl }],
    paths: {
      '/quote': {
        get: {
          operationId: 'getQuote',
          summary: 'A quote (third-party seller)',
          parameters: [{ $ref: '#/components/parameters/Topic' }],
          responses: { '200': { description: 'The quote' }, '402': { description: 'Payment Required' } },
          'x-payment-info': { protocols: ['x402'], pricingMode: 'fixed', price },
        },
      },
    },
    components: { parameters: { Topic: { name: 'topic', in: 'query', schema: { type: 'string' } } } },
  };
}

/** An agent paying from payer `i`, with the catalog (or `remote`) as its only remote (tools prefixed `quotes_`). */
async function agentFor(i: number, budget: Record<string, string> = {}, remote = catalog.url): Promise<AgentProcess> {
  const dataDir = agentDataDir();
  dirs.push(dataDir);
  const key = paid.chain.accounts.find((a) => a.address === paid.payers[i]!.address)!.privateKey;
  const agent = await spawnAgent(['--remote', `quotes=${remote}`], {
    DATA_DIR: dataDir,
    NETWORKS_JSON: paid.env.NETWORKS_JSON!,
    WALLET_EVM_PRIVATE_KEY: key,
    BUDGET_NETWORKS: LOCAL_NETWORK,
    BUDGET_MAX_USD_PER_DAY: '0.5',
    ...budget,
  });
  agents.push(agent);
  return agent;
}

describe('remote mode over a catalog published only as /.well-known/x402 (official @x402/express seller)', () => {
  it("lists the catalog's item under its prefix with its input schema as published, then the agent's own tools", async () => {
    const agent = await agentFor(0);
    const { tools } = await agent.client.listTools();
    expect(tools.map((t) => t.name)).toEqual([
      'quotes_quote',
      'wallet-status',
      'spending-history',
      'search_services',
      'check_price',
      'fetch_paid',
    ]);
    expect(tools[0]).toMatchObject({
      description: 'A quote (third-party seller)',
      inputSchema: { type: 'object', properties: { topic: { type: 'string' } } },
    });
  });

  it('pays the official seller exactly its price over HTTP and books the payment under the tool and its budget', async () => {
    const agent = await agentFor(0);
    const payer = paid.payers[0]!.address;
    const before = { payer: await paid.balance(payer), payTo: await paid.balance(payTo), runs: seller.runs() };
    const result = await agent.client.callTool({ name: 'quotes_quote', arguments: { topic: 'x' } });
    expect(result.isError, JSON.stringify(result)).toBeFalsy();
    expect(result.structuredContent).toEqual({ quote: 'paid knowledge', n: before.runs + 1 });
    const receipt = result._meta?.['x402/payment-response'] as { transaction: string };
    expect(receipt).toMatchObject({ success: true, network: LOCAL_NETWORK, payer });
    expect(await paid.balance(payer)).toBe(before.payer - PRICE);
    expect(await paid.balance(payTo)).toBe(before.payTo + PRICE);
    expect(seller.runs()).toBe(before.runs + 1);
    const history = (await agent.client.callTool({ name: 'spending-history', arguments: {} })).structuredContent as {
      payments: Array<Record<string, unknown>>;
      budget: Record<string, unknown>;
    };
    expect(history.payments).toEqual([
      expect.objectContaining({
        tool: 'quotes_quote',
        resource: `${seller.url}/quote?topic=x`,
        amount: '1000',
        usd: '$0.001',
        status: 'settled',
        transaction: receipt.transaction,
      }),
    ]);
    expect(history.budget).toMatchObject({ spentToday: '$0.001', remainingToday: '$0.499' });
  });

  it('refuses a price over the per-call limit without paying, and the seller runs nothing', async () => {
    const agent = await agentFor(1, { BUDGET_MAX_USD_PER_CALL: '0.0005' });
    const payer = paid.payers[1]!.address;
    const before = { payer: await paid.balance(payer), runs: seller.runs() };
    const result = await agent.client.callTool({ name: 'quotes_quote', arguments: {} });
    expect(errorOf(result)).toMatchObject({ code: 'budget_exceeded', retryable: false });
    expect(await paid.balance(payer)).toBe(before.payer);
    expect(seller.runs()).toBe(before.runs);
  });

  it('tollbooth call resolves a tool the remote publishes only in its catalog, and pays it once', async () => {
    const dataDir = agentDataDir();
    dirs.push(dataDir);
    const payer = paid.payers[2]!.address;
    const key = paid.chain.accounts.find((a) => a.address === payer)!.privateKey;
    const before = { payer: await paid.balance(payer), runs: seller.runs() };
    const run = await runCli(['call', 'quote', '--input', '{}', '--remote', catalog.url], {
      DATA_DIR: dataDir,
      NETWORKS_JSON: paid.env.NETWORKS_JSON!,
      WALLET_EVM_PRIVATE_KEY: key,
      BUDGET_NETWORKS: LOCAL_NETWORK,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ quote: 'paid knowledge', n: before.runs + 1 });
    expect(await paid.balance(payer)).toBe(before.payer - PRICE);
    expect(seller.runs()).toBe(before.runs + 1);
  });
});

describe('remote mode over the same seller published only as OpenAPI with x-payment-info', () => {
  it("lists the paid operation under its prefix, its query parameter as the input schema, and pays the seller's price", async () => {
    const agent = await agentFor(3, {}, openApiCatalog.url);
    const { tools } = await agent.client.listTools();
    expect(tools[0]).toMatchObject({
      name: 'quotes_getQuote',
      description: 'A quote (third-party seller)',
      inputSchema: { type: 'object', properties: { topic: { type: 'string' } } },
      _meta: { 'x402/price': { usd: '0.001', currency: 'USD' } },
    });
    const payer = paid.payers[3]!.address;
    const before = { payer: await paid.balance(payer), payTo: await paid.balance(payTo), runs: seller.runs() };
    const result = await agent.client.callTool({ name: 'quotes_getQuote', arguments: { topic: 'x' } });
    expect(result.isError, JSON.stringify(result)).toBeFalsy();
    expect(result.structuredContent).toEqual({ quote: 'paid knowledge', n: before.runs + 1 });
    const receipt = result._meta?.['x402/payment-response'] as { transaction: string };
    expect(receipt).toMatchObject({ success: true, network: LOCAL_NETWORK, payer });
    expect(await paid.balance(payer)).toBe(before.payer - PRICE);
    expect(await paid.balance(payTo)).toBe(before.payTo + PRICE);
    const history = (await agent.client.callTool({ name: 'spending-history', arguments: {} })).structuredContent as {
      payments: Array<Record<string, unknown>>;
      budget: Record<string, unknown>;
    };
    expect(history.payments).toEqual([
      expect.objectContaining({
        tool: 'quotes_getQuote',
        resource: `${seller.url}/quote?topic=x`,
        amount: '1000',
        status: 'settled',
        transaction: receipt.transaction,
      }),
    ]);
    expect(history.budget).toMatchObject({ spentToday: '$0.001', remainingToday: '$0.499' });
  });

  it('refuses without paying when the challenge asks more than the document published, beyond the drift tolerance', async () => {
    openApiCatalog.publish(openApi(seller.url, '0.0001'));
    const agent = await agentFor(4, {}, openApiCatalog.url);
    const payer = paid.payers[4]!.address;
    const before = { payer: await paid.balance(payer), runs: seller.runs() };
    const result = await agent.client.callTool({ name: 'quotes_getQuote', arguments: {} });
    expect(errorOf(result)).toMatchObject({ code: 'budget_exceeded', retryable: false });
    expect(errorOf(result).message).toMatch(/asks \$0\.001, more than 10% above the catalog's price \(\$0\.0001\)/);
    expect(await paid.balance(payer)).toBe(before.payer);
    expect(seller.runs()).toBe(before.runs);
  });
});

describe('remote mode over a REST seller that publishes only a YAML OpenAPI document (PUT, DELETE, a header)', () => {
  it('lists both operations with their path, header and body fields, and pays each with its method and header', async () => {
    const agent = await agentFor(5, {}, rest.url);
    const { tools } = await agent.client.listTools();
    const tenant = { type: 'string', description: 'Whose notes' };
    expect(tools.slice(0, 2).map(({ name, inputSchema }) => ({ name, inputSchema }))).toEqual([
      {
        name: 'quotes_putNote',
        inputSchema: {
          type: 'object',
          properties: { text: { type: 'string' }, id: { type: 'string' }, 'X-Tenant': tenant },
          required: ['text', 'id', 'X-Tenant'],
        },
      },
      {
        name: 'quotes_deleteNote',
        inputSchema: {
          type: 'object',
          properties: { id: { type: 'string' }, 'X-Tenant': tenant },
          required: ['id', 'X-Tenant'],
        },
      },
    ]);
    const payer = paid.payers[5]!.address;
    const before = { payer: await paid.balance(payer), payTo: await paid.balance(payTo) };
    const put = await agent.client.callTool({
      name: 'quotes_putNote',
      arguments: { id: 'n1', 'X-Tenant': 'acme', text: 'hello' },
    });
    expect(put.isError, JSON.stringify(put)).toBeFalsy();
    const del = await agent.client.callTool({ name: 'quotes_deleteNote', arguments: { id: 'n1', 'X-Tenant': 'acme' } });
    expect(del.isError, JSON.stringify(del)).toBeFalsy();
    expect(rest.calls()).toEqual([
      { method: 'PUT', id: 'n1', tenant: 'acme', body: { id: 'n1', text: 'hello' } },
      { method: 'DELETE', id: 'n1', tenant: 'acme', body: undefined },
    ]);
    expect(await paid.balance(payer)).toBe(before.payer - 3000n);
    expect(await paid.balance(payTo)).toBe(before.payTo + 3000n);
    const history = (await agent.client.callTool({ name: 'spending-history', arguments: {} })).structuredContent as {
      payments: Array<Record<string, unknown>>;
    };
    expect(history.payments.map(({ tool, resource, amount, status }) => ({ tool, resource, amount, status }))).toEqual(
      expect.arrayContaining([
        { tool: 'quotes_putNote', resource: `${rest.url}/notes/n1`, amount: '1000', status: 'settled' },
        { tool: 'quotes_deleteNote', resource: `${rest.url}/notes/n1`, amount: '2000', status: 'settled' },
      ]),
    );
  });
});
