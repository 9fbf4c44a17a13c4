import { ListToolsRequestSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CATALOG_LIMITS, loadCatalog } from '../../src/agent/catalog.js';
import { McpRemotes } from '../../src/agent/mcp-remote.js';
import type { Logger } from '../../src/shared/log.js';
import { startMcpLookAlike, type McpLookAlike } from '../support/mcp-lookalike.js';
import { startX402Catalog, x402Document, type X402Catalog } from '../support/x402-catalog.js';

/** A logger keeping every line. */
function recordingLogger(): Logger & {
  lines: Array<{ level: string; msg: string; fields?: Record<string, unknown> }>;
} {
  const lines: Array<{ level: string; msg: string; fields?: Record<string, unknown> }> = [];
  const at = (level: string) => (msg: string, fields?: Record<string, unknown>) => lines.push({ level, msg, fields });
  return { lines, info: at('info'), warn: at('warn'), error: at('error') };
}

/** A stateless MCP server listing `tools` (it answers nothing else). */
function startListingMcp(tools: Tool[]): Promise<McpLookAlike> {
  return startMcpLookAlike((server) => server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools })));
}

const quoteSchema = { type: 'object', properties: { symbol: { type: 'string' } }, required: ['symbol'] };
let catalog: X402Catalog;
/** The MCP connections the catalogs open, closed after each test. */
const mcpRemotes = new McpRemotes();

beforeAll(async () => {
  catalog = await startX402Catalog({});
});
afterAll(async () => {
  await catalog.close();
});
afterEach(async () => {
  await mcpRemotes.close();
});

describe('building remote mode tools from what a remote publishes', () => {
  it("reads an MCP endpoint's tools/list first: names prefixed, input schemas passed on as sent, output schemas dropped", async () => {
    const mcp = await startListingMcp([
      {
        name: 'forecast',
        description: 'Weather',
        inputSchema: quoteSchema as Tool['inputSchema'],
        // A schema this side never compiles: an unresolvable reference would throw in a validator.
        outputSchema: { type: 'object', properties: { x: { $ref: '#/nowhere' } } },
        _meta: { 'x402/price': { usd: 0.01 } },
      },
    ]);
    try {
      const log = recordingLogger();
      const tools = await loadCatalog(mcpRemotes, [{ url: mcp.url, prefix: 'weather' }], 5000, log);
      expect(tools.map((t) => t.entry)).toEqual([
        {
          name: 'weather_forecast',
          description: 'Weather',
          inputSchema: quoteSchema,
          _meta: { 'x402/price': { usd: 0.01 } },
        },
      ]);
      expect(tools[0]!.target.request!({ symbol: 'X' })).toEqual({
        url: `${mcp.url}/mcp`,
        method: 'POST',
        mcp: { tool: 'forecast', args: { symbol: 'X' } },
      });
      expect(log.lines).toEqual([
        expect.objectContaining({ level: 'info', fields: expect.objectContaining({ source: 'mcp', tools: 1 }) }),
      ]);
    } finally {
      await mcpRemotes.close();
    }
  });

  it('falls back to /.well-known/x402 when the remote has no MCP endpoint: one HTTP tool per item', async () => {
    catalog.publish(
      x402Document([
        { resource: 'http://127.0.0.1:9/quote', method: 'GET', name: 'quote', inputSchema: quoteSchema },
        { resource: 'http://127.0.0.1:9/api/report', method: 'POST', description: 'A report' },
        { resource: 'http://127.0.0.1:9/api/hold', method: 'delete', name: 'release-hold' },
        { resource: 'http://127.0.0.1:9/api/profile', method: 'PUT', name: 'profile' },
        { resource: 'http://127.0.0.1:9/api/trace', method: 'TRACE', name: 'trace' },
      ]),
    );
    const log = recordingLogger();
    const tools = await loadCatalog(mcpRemotes, [{ url: catalog.url }], 5000, log);
    // Every method an OpenAPI operation may have is read from discovery items too; another (TRACE) is left out.
    expect(tools.map((t) => [t.entry.name, t.entry.inputSchema])).toEqual([
      ['quote', quoteSchema],
      ['report', { type: 'object' }],
      ['release-hold', { type: 'object' }],
      ['profile', { type: 'object' }],
    ]);
    expect(tools[2]!.target.request!({ id: 7 })).toEqual({ url: 'http://127.0.0.1:9/api/hold?id=7', method: 'DELETE' });
    expect(tools[3]!.target.request!({ name: 'x' })).toMatchObject({
      url: 'http://127.0.0.1:9/api/profile',
      method: 'PUT',
      body: '{"name":"x"}',
    });
    expect(tools[0]!.target.request!({ symbol: 'A B' })).toEqual({
      url: 'http://127.0.0.1:9/quote?symbol=A+B',
      method: 'GET',
    });
    expect(tools[1]!.target.request!({ n: 1 })).toEqual({
      url: 'http://127.0.0.1:9/api/report',
      method: 'POST',
      body: '{"n":1}',
    });
    expect(log.lines[0]).toMatchObject({ level: 'info', fields: { source: 'x402-discovery', tools: 4 } });
    expect(String(log.lines[0]!.fields!.remote)).toBe(`${catalog.url}/`);
  });

  it('leaves out invalid and taken names and oversized schemas, and reads at most the per-remote limit', async () => {
    const big = { type: 'object', description: 'x'.repeat(CATALOG_LIMITS.maxSchemaBytes) };
    const many = Array.from({ length: CATALOG_LIMITS.maxTools + 5 }, (_, i) => ({
      resource: `http://127.0.0.1:9/t${i}`,
      name: `t${i}`,
    }));
    catalog.publish(
      x402Document([
        { resource: 'http://127.0.0.1:9/a', name: 'bad name!' },
        { resource: 'http://127.0.0.1:9/b', name: 'wallet-status' },
        { resource: 'http://127.0.0.1:9/c', name: 'huge', inputSchema: big },
        ...many,
      ]),
    );
    const log = recordingLogger();
    const tools = await loadCatalog(mcpRemotes, [{ url: catalog.url }], 5000, log, ['wallet-status']);
    expect(tools).toHaveLength(CATALOG_LIMITS.maxTools - 3);
    expect(tools.map((t) => t.entry.name)).not.toContain('huge');
    expect(log.lines[0]).toMatchObject({ fields: { skipped: 3 } });
  });

  it('leaves out a tool whose input schema nests deeper than the limit', async () => {
    let deep: Record<string, unknown> = { type: 'string' };
    for (let i = 0; i < CATALOG_LIMITS.maxSchemaDepth / 2 + 1; i++) deep = { type: 'object', properties: { a: deep } };
    catalog.publish(x402Document([{ resource: 'http://127.0.0.1:9/deep', name: 'deep', inputSchema: deep }]));
    expect(await loadCatalog(mcpRemotes, [{ url: catalog.url }], 5000, recordingLogger())).toEqual([]);
    catalog.publish(x402Document([{ resource: 'http://127.0.0.1:9/ok', name: 'ok', inputSchema: { type: 'object' } }]));
    expect(
      (await loadCatalog(mcpRemotes, [{ url: catalog.url }], 5000, recordingLogger())).map((t) => t.entry.name),
    ).toEqual(['ok']);
  });

  it('keeps the first of two remotes publishing the same name, unless a prefix sets them apart', async () => {
    catalog.publish(x402Document([{ resource: 'http://127.0.0.1:9/quote', name: 'quote' }]));
    const same = await loadCatalog(mcpRemotes, [{ url: catalog.url }, { url: catalog.url }], 5000, recordingLogger());
    expect(same.map((t) => t.entry.name)).toEqual(['quote']);
    const apart = await loadCatalog(
      mcpRemotes,
      [{ url: catalog.url }, { url: catalog.url, prefix: 'b' }],
      5000,
      recordingLogger(),
    );
    expect(apart.map((t) => t.entry.name)).toEqual(['quote', 'b_quote']);
  });

  it('reads only the discovery document when the URL names it', async () => {
    catalog.publish(x402Document([{ resource: '/quote', name: 'quote' }]));
    const log = recordingLogger();
    const tools = await loadCatalog(mcpRemotes, [{ url: `${catalog.url}/.well-known/x402` }], 5000, log);
    expect(tools[0]!.target.request!({})).toEqual({ url: `${catalog.url}/quote`, method: 'GET' });
    catalog.publish('not json');
    expect(await loadCatalog(mcpRemotes, [{ url: `${catalog.url}/.well-known/x402` }], 5000, log)).toEqual([]);
    expect(log.lines[1]!.fields!.reasons).toEqual([expect.stringMatching(/^\/\.well-known\/x402: /)]);
  });

  it('says in one warning why a remote serves no tools, and lists none for it', async () => {
    catalog.publish('not json');
    const log = recordingLogger();
    expect(await loadCatalog(mcpRemotes, [{ url: catalog.url }], 5000, log)).toEqual([]);
    expect(log.lines).toHaveLength(1);
    expect(log.lines[0]).toMatchObject({ level: 'warn', fields: { remote: `${catalog.url}/` } });
    const reasons = log.lines[0]!.fields!.reasons as string[];
    expect(reasons).toHaveLength(3);
    expect(reasons[0]).toMatch(/^mcp: /);
    expect(reasons[1]).toMatch(/^\/\.well-known\/x402: /);
    expect(reasons[2]).toMatch(/^openapi: .*\/openapi\.json answered 404/);
  });
});
