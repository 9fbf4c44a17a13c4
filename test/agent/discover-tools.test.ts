import { rmSync } from 'node:fs';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Agent } from '../../src/agent/agent.js';
import { callDiscoverTool } from '../../src/agent/discover-tools.js';
import { loadAgentConfig } from '../../src/agent/settings.js';
import { agentOfPayer } from '../support/agent-of-payer.js';
import { itemOf, startBazaar, type Bazaar } from '../support/bazaar.js';
import { startOfficialSeller, type OfficialSeller } from '../support/official-seller.js';
import { startX402Catalog, type X402Catalog } from '../support/x402-catalog.js';
import { LOCAL_NETWORK, startPaidEnvironment, type PaidEnvironment } from '../support/paid.js';

let paid: PaidEnvironment;
let seller: OfficialSeller;
let bazaar: Bazaar;
let openApiOnly: X402Catalog;
const payTo = privateKeyToAccount(generatePrivateKey()).address;
const dirs: string[] = [];
const agents: Agent[] = [];
const weather = {
  resource: 'https://weather.example/forecast',
  type: 'http',
  x402Version: 2,
  accepts: [],
  lastUpdated: new Date(0).toISOString(),
  metadata: { description: 'A weather forecast' },
};

beforeAll(async () => {
  paid = await startPaidEnvironment(3);
  seller = await startOfficialSeller(paid, payTo);
  bazaar = await startBazaar([weather, await itemOf(`${seller.url}/quote`)]);
  // An origin describing the same seller only by an OpenAPI document (no discovery API, no /.well-known/x402).
  const quote = {
    operationId: 'openQuote',
    description: 'Quotes described by OpenAPI only',
    'x-payment-info': { protocols: ['x402'], pricingMode: 'fixed', price: '0.001' },
  };
  openApiOnly = await startX402Catalog(
    {
      openapi: '3.1.0',
      info: { title: 'q', version: '1' },
      servers: [{ url: seller.url }],
      paths: { '/quote': { get: quote } },
    },
    '/openapi.json',
  );
}, 120_000);
afterAll(async () => {
  for (const agent of agents) await agent.close();
  await bazaar?.close();
  await openApiOnly?.close();
  await seller?.close();
  await paid?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** The agent of payer `i` with its own store, searching `indexes`. */
const agentFor = (i: number, indexes: string) =>
  agentOfPayer(paid, i, { AGENT_DISCOVERY_URLS: indexes }, { agents, dirs });

/** Calls one discovery tool as the MCP server would, approving any payment. */
async function call(agent: Agent, name: string, args: unknown): Promise<Record<string, unknown>> {
  const deps = { ...agent, caller: agent.caller, indexes: agent.settings.discovery ?? [] };
  const session = { signal: new AbortController().signal, approve: async () => 'accepted' as const };
  const result = await callDiscoverTool(deps, name, args, session);
  return { isError: result.isError ?? false, ...(result.structuredContent as Record<string, unknown>) };
}

describe('finding services through a Bazaar-style discovery API', () => {
  it('AGENT_DISCOVERY_URLS is read as a comma list of indexes', () => {
    const config = loadAgentConfig({ AGENT_DISCOVERY_URLS: 'https://a.example, https://b.example' });
    expect(config.settings.discovery).toEqual(['https://a.example', 'https://b.example']);
  });

  it('search_services finds the official seller by its description, with its price in dollars and its network', async () => {
    const agent = await agentFor(0, bazaar.url);
    const found = await call(agent, 'search_services', { query: 'QUOTE third-party' });
    expect(found).toMatchObject({
      isError: false,
      errors: [],
      services: [
        {
          name: 'quote',
          description: 'A quote (third-party seller)',
          resource: `${seller.url}/quote`,
          origin: seller.url,
          networks: [LOCAL_NETWORK],
          price: { min: '$0.001', max: '$0.001' },
        },
      ],
    });
  });

  it('search_services keeps only items holding every word, and reports an unreadable index without its text', async () => {
    const agent = await agentFor(0, `http://127.0.0.1:1,${bazaar.url}`);
    const found = await call(agent, 'search_services', { query: 'weather' });
    expect(found.services).toEqual([
      expect.objectContaining({ name: 'forecast', resource: weather.resource, networks: [] }),
    ]);
    expect((found.services as unknown[])[0]).not.toHaveProperty('price');
    expect(found.errors).toEqual(['http://127.0.0.1:1: could not be read']);
    expect((await call(agent, 'search_services', { query: 'weather quote' })).services).toEqual([]);
  });

  it('search_services reads an origin that publishes only OpenAPI: its paid operations, with their published price', async () => {
    const agent = await agentFor(0, openApiOnly.url);
    const found = await call(agent, 'search_services', { query: 'openapi quotes' });
    expect(found).toMatchObject({
      isError: false,
      errors: [],
      services: [
        {
          name: 'openQuote',
          description: 'Quotes described by OpenAPI only',
          resource: `${seller.url}/quote`,
          origin: seller.url,
          networks: [],
          price: { min: '$0.001', max: '$0.001' },
          index: `${openApiOnly.url}/openapi.json`,
        },
      ],
    });
  });

  it('check_price shows the price and the option it would pay, and pays nothing', async () => {
    const agent = await agentFor(1, bazaar.url);
    const payer = paid.payers[1]!.address;
    const before = { payer: await paid.balance(payer), runs: seller.runs() };
    const answer = await call(agent, 'check_price', { url: `${seller.url}/quote` });
    expect(answer).toMatchObject({
      isError: false,
      price: '$0.001',
      payTo,
      option: { protocol: 'x402', network: LOCAL_NETWORK, amount: '1000' },
    });
    expect(await paid.balance(payer)).toBe(before.payer);
    expect(seller.runs()).toBe(before.runs);
    expect(await agent.spends.listSpends()).toEqual([]);
  });

  it('fetch_paid pays the price exactly once, returns the body and the receipt, and books one settled spend', async () => {
    const agent = await agentFor(2, bazaar.url);
    const payer = paid.payers[2]!.address;
    const before = { payer: await paid.balance(payer), payTo: await paid.balance(payTo), runs: seller.runs() };
    const answer = await call(agent, 'fetch_paid', {
      url: `${seller.url}/quote`,
      headers: { Accept: 'application/json' },
    });
    expect(answer).toMatchObject({ isError: false, status: 200, receipt: { success: true, network: LOCAL_NETWORK } });
    expect(JSON.parse(answer.body as string)).toMatchObject({ quote: 'paid knowledge' });
    expect(await paid.balance(payer)).toBe(before.payer - 1000n);
    expect(await paid.balance(payTo)).toBe(before.payTo + 1000n);
    expect(seller.runs()).toBe(before.runs + 1);
    const spends = await agent.spends.listSpends();
    expect(spends).toHaveLength(1);
    expect(spends[0]).toMatchObject({ resource: `${seller.url}/quote`, status: 'settled', amount: '1000' });
  });

  it('rejects a URL that is not http(s) before sending anything', async () => {
    const agent = await agentFor(0, bazaar.url);
    const result = await callDiscoverTool(
      { ...agent, caller: agent.caller, indexes: [] },
      'fetch_paid',
      { url: 'file:///etc/passwd' },
      { signal: new AbortController().signal, approve: async () => 'accepted' },
    );
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toContain('url');
    expect(await agent.spends.listSpends()).toEqual([]);
  });
});
