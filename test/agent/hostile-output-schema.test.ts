import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CallToolRequestSchema, ListToolsRequestSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, type Agent } from '../../src/agent/agent.js';
import { loadCatalog } from '../../src/agent/catalog.js';
import { McpRemotes } from '../../src/agent/mcp-remote.js';
import { loadAgentConfig } from '../../src/agent/settings.js';
import { silentLogger } from '../../src/shared/log.js';
import { openStore } from '../../src/store/open.js';
import { startMcpLookAlike, type McpLookAlike } from '../support/mcp-lookalike.js';

/**
 * A seller's MCP tool schemas are its data: remote mode lists and calls a tool whose `outputSchema` would hang or
 * break a validator (a catastrophically backtracking `pattern`, self-referencing and deeply nested `$ref`s, an invalid
 * keyword), and passes on the seller's result as sent, though it violates that schema. The seller is a look-alike on
 * 127.0.0.1: the MCP SDK's server over streamable HTTP, answering tools/list and tools/call.
 */

/** A `$ref` chain `depth` levels deep, each level a definition pointing at the next; the last points at the first. */
function nestedDefs(depth: number): Record<string, unknown> {
  const defs: Record<string, unknown> = {};
  for (let i = 0; i < depth; i++)
    defs[`n${i}`] = { type: 'object', properties: { next: { $ref: `#/$defs/n${(i + 1) % depth}` } } };
  return defs;
}

const hostileSchema = {
  type: 'object' as const,
  properties: {
    // Matched against "aaa…a!" this pattern backtracks through 2^41 ways to split the a's before failing.
    word: { type: 'string', pattern: '^(a+)+$' },
    tree: { $ref: '#/$defs/n0' },
    self: { $ref: '#' },
    // Not a valid value of a keyword: a validator refuses to compile the schema.
    count: { type: 'integer', minimum: 'none' },
  },
  required: ['word', 'tree', 'count'],
  additionalProperties: false,
  $defs: nestedDefs(200),
};

/** What the seller answers: it matches none of its own schema's constraints. */
const violating = {
  word: `${'a'.repeat(41)}!`,
  tree: { next: 'not an object' },
  count: 'many',
  extra: true,
};

const tool: Tool = {
  name: 'echo',
  description: 'Answers with data its own output schema rejects',
  inputSchema: { type: 'object', properties: {} },
  outputSchema: hostileSchema,
};

/** The seller at POST /mcp: it lists `tool` and answers each call with `violating`. */
async function startSeller(): Promise<McpLookAlike> {
  const seller = await startMcpLookAlike((server) => {
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [tool] }));
    server.setRequestHandler(CallToolRequestSchema, async () => ({
      content: [{ type: 'text', text: JSON.stringify(violating) }],
      structuredContent: violating,
    }));
  });
  return { ...seller, url: `${seller.url}/mcp` };
}

let seller: McpLookAlike;
let agent: Agent;
let dataDir: string;
const mcp = new McpRemotes();

beforeAll(async () => {
  seller = await startSeller();
  dataDir = mkdtempSync(join(tmpdir(), 'tollbooth-agent-'));
  const config = loadAgentConfig({ DATA_DIR: dataDir, REMOTE_URL: seller.url, LOG_LEVEL: 'silent' });
  agent = await createAgent(config, silentLogger, openStore, mcp);
});
afterAll(async () => {
  await agent?.close();
  await seller?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('remote mode with a seller whose tool publishes a hostile output schema', () => {
  it('lists the tool without its output schema, and its call returns the seller’s result unchanged', async () => {
    const catalog = await loadCatalog(mcp, [{ url: seller.url, prefix: 'seller' }], 5000, silentLogger);
    expect(catalog.map((t) => t.entry)).toEqual([
      { name: 'seller_echo', description: tool.description, inputSchema: tool.inputSchema },
    ]);
    const outcome = await agent.caller.call(
      catalog[0]!.target,
      {},
      { signal: new AbortController().signal, approve: async () => 'unavailable' },
    );
    expect(outcome).toEqual({ type: 'success', output: violating });
  });
});
