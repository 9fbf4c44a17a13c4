import { request } from 'node:http';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, ErrorCode, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnyToolDefinition } from '../../src/tool/tool.js';
import { annuity } from '../../tools/annuity.js';
import { developmentIndicator } from '../../tools/development-indicator.js';
import { geoDistance } from '../../tools/geo-distance.js';
import { LOCAL_NETWORK, type PaidEnvironment } from '../support/paid.js';
import { encodePayment, signExactPayment } from '../support/payer.js';
import { startPaidServer, type PaidServer } from '../support/paid-server.js';
import { decodeHeader, type TestServer } from '../support/server.js';

let paid: PaidEnvironment;
let server: TestServer;
let runs: Map<string, number>;
let mcp: Client;

let setup: PaidServer;
beforeAll(async () => {
  ({ paid, server, mcp, runs } = setup = await startPaidServer(3, {
    tools: [annuity, developmentIndicator, geoDistance] as AnyToolDefinition[],
  }));
}, 120_000);
afterAll(() => setup?.stop());

async function localEntry(method: 'GET' | 'POST', path: string): Promise<PaymentRequirements> {
  const res = await fetch(server.url + path, { method });
  const challenge = decodeHeader(res.headers.get('payment-required')) as PaymentRequired;
  const entry = challenge.accepts.find((a) => a.network === LOCAL_NETWORK);
  if (!entry) throw new Error('the local network is not advertised');
  return entry;
}

/** A raw POST through node:http, so that exactly the given headers (or none) are sent. */
function rawPost(
  path: string,
  body: string,
  headers: Record<string, string>,
): Promise<{ status: number; error: { code: string; field?: string } }> {
  return new Promise((resolve, reject) => {
    const req = request(
      new URL(path, server.url),
      { method: 'POST', headers: { 'content-length': String(Buffer.byteLength(body)), ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            error: (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { error: { code: string } }).error,
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const annuityBody = JSON.stringify({ payment: 100, ratePerPeriod: 0.05, periods: 10 });
const geoArgs = { from: { lat: 51.5074, lng: -0.1278 }, to: { lat: 48.8566, lng: 2.3522 } };

describe('a paid HTTP call with an input mistake is refused before its payment is read, and the payment stays usable', () => {
  it('refuses unknown fields, non-JSON bodies, non-object bodies and unreadable encodings, then the same payment buys the corrected call once', async () => {
    const payer = paid.payers[0]!;
    const payment = encodePayment(await signExactPayment(payer, await localEntry('POST', '/api/annuity')));
    const before = { payer: await paid.balance(payer.address), payTo: await paid.balance(paid.payTo) };
    const json = { 'content-type': 'application/json', 'payment-signature': payment };
    const mistakes: Array<[string, string, Record<string, string>, number, string]> = [
      [
        'unknown field',
        JSON.stringify({ payment: 100, ratePerPeriod: 0.05, periods: 10, tipe: 'due' }),
        json,
        400,
        'tipe',
      ],
      ['query parameter on a POST route', annuityBody, json, 400, 'type'],
      ['no Content-Type', annuityBody, { 'payment-signature': payment }, 400, '(body)'],
      ['text/plain', annuityBody, { ...json, 'content-type': 'text/plain' }, 400, '(body)'],
      ['null body', 'null', json, 400, '(body)'],
      ['array body', '[1]', json, 400, '(body)'],
      ['unsupported encoding', annuityBody, { ...json, 'content-encoding': 'foo' }, 415, '(body)'],
      ['corrupt gzip', annuityBody, { ...json, 'content-encoding': 'gzip' }, 400, '(body)'],
    ];
    for (const [mistake, body, headers, status, field] of mistakes) {
      const path = mistake === 'query parameter on a POST route' ? '/api/annuity?type=due' : '/api/annuity';
      const res = await rawPost(path, body, headers);
      expect(res.status, mistake).toBe(status);
      expect(res.error.field, mistake).toBe(field);
    }
    expect(runs.get('annuity') ?? 0).toBe(0);
    expect(await paid.balance(payer.address)).toBe(before.payer);
    expect(await paid.balance(paid.payTo)).toBe(before.payTo);
    expect(
      (await server.runtime.store.ledger.listReceipts({ limit: 10 })).filter((r) => r.tool === 'annuity'),
    ).toHaveLength(0);

    const corrected = await rawPost('/api/annuity', annuityBody, json);
    expect(corrected.status).toBe(200);
    expect(runs.get('annuity')).toBe(1);
    expect(await paid.balance(payer.address)).toBe(before.payer - 1000n);
  });

  it('refuses a paid GET with a misspelt query parameter without running or charging anything', async () => {
    const payer = paid.payers[1]!;
    const payment = encodePayment(await signExactPayment(payer, await localEntry('GET', '/api/development-indicator')));
    const before = await paid.balance(payer.address);
    const res = await fetch(
      `${server.url}/api/development-indicator?country=BR&indicator=NY.GDP.MKTP.CD&startYer=2019`,
      { headers: { 'payment-signature': payment } },
    );
    expect(res.status).toBe(400);
    expect(res.headers.get('payment-response')).toBeNull();
    const { error } = (await res.json()) as { error: { code: string; field: string; message: string } };
    expect(error).toMatchObject({ code: 'invalid_input', field: 'startYer' });
    expect(error.message).toContain('This endpoint takes: country, indicator, startYear, endYear');
    expect(runs.get('development-indicator') ?? 0).toBe(0);
    expect(await paid.balance(payer.address)).toBe(before);
    expect(
      (await server.runtime.store.ledger.listReceipts({ limit: 10 })).filter((r) => r.tool === 'development-indicator'),
    ).toHaveLength(0);
  });
});

describe('a paid MCP call with an input mistake is refused before its payment is read, and the payment stays usable', () => {
  it('refuses an unknown argument and malformed params, then the same payment buys the corrected call once', async () => {
    const payer = paid.payers[2]!;
    const unpaid = (await mcp.callTool({ name: 'geo-distance', arguments: geoArgs })) as CallToolResult;
    const entry = (unpaid.structuredContent as unknown as PaymentRequired).accepts.find(
      (a) => a.network === LOCAL_NETWORK,
    )!;
    const payment = await signExactPayment(payer, entry);
    const before = await paid.balance(payer.address);
    const _meta = { 'x402/payment': payment };

    const unknown = (await mcp.callTool({
      name: 'geo-distance',
      arguments: { ...geoArgs, unit: 'km' },
      _meta,
    })) as CallToolResult;
    expect(unknown.isError).toBe(true);
    expect(unknown._meta?.['x402/payment-response']).toBeUndefined();
    expect(JSON.parse((unknown.content[0] as { text: string }).text).error).toMatchObject({
      code: 'invalid_input',
      field: 'unit',
    });

    const nested = (await mcp.callTool({
      name: 'geo-distance',
      arguments: { ...geoArgs, to: { ...geoArgs.to, alt: 35 } },
      _meta,
    })) as CallToolResult;
    expect(JSON.parse((nested.content[0] as { text: string }).text).error).toMatchObject({
      code: 'invalid_input',
      field: 'to.alt',
    });

    for (const args of [[geoArgs], 'from London to Paris', null]) {
      const error = await mcp
        .request(
          { method: 'tools/call', params: { name: 'geo-distance', arguments: args, _meta } } as never,
          CallToolResultSchema,
        )
        .catch((err: unknown) => err);
      expect(error, JSON.stringify(args)).toBeInstanceOf(McpError);
      expect((error as McpError).code).toBe(ErrorCode.InvalidParams);
    }
    expect(runs.get('geo-distance') ?? 0).toBe(0);
    expect(await paid.balance(payer.address)).toBe(before);

    const corrected = (await mcp.callTool({ name: 'geo-distance', arguments: geoArgs, _meta })) as CallToolResult;
    expect(corrected.isError).toBeFalsy();
    expect(runs.get('geo-distance')).toBe(1);
    expect(await paid.balance(payer.address)).toBe(before - 1000n);
  });
});
