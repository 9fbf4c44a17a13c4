/**
 * An MCP server selling `annuity` with MPP only, built with mppx's MCP SDK transport (`Transport.mcpSdk()`) and its
 * EVM charge method settling on the local chain: an unpaid tools/call is refused with the binding's JSON-RPC error
 * (-32042, the challenges in `data`), a paid one answers with `_meta["org.paymentauth/receipt"]`. Stateless
 * streamable HTTP at POST /mcp (a fresh low-level SDK server per request: McpServer would turn the error into a result).
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { Transport } from 'mppx/mcp-sdk/server';
import { Mppx } from 'mppx/server';
import { annuity } from '../../tools/annuity.js';
import type { BaseEnvironment } from './chain/permit2-env.js';
import { testContext } from './context.js';
import { localEvmCharge } from './mpp-seller.js';

/** A running MPP-only MCP seller. */
export interface MppMcpSeller {
  /** The MCP endpoint (`…/mcp`). */
  url: string;
  /** tools/call requests that carried `_meta["org.paymentauth/credential"]`, and annuity runs (after settlement only). */
  credentials: () => number;
  runs: () => number;
  close(): Promise<void>;
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? (JSON.parse(text) as unknown) : undefined;
}

/** Starts the seller on a free port of 127.0.0.1, selling `annuity` for `price` dollars of the test USDC of `base`. */
export async function startMppMcpSeller(base: BaseEnvironment, price: string): Promise<MppMcpSeller> {
  // mppx's EVM charge brings its own HTTP transport (MPP + x402 headers), which would win over the MCP one: drop it.
  const { transport: _http, ...method } = localEvmCharge(base);
  const mppx = Mppx.create({
    methods: [method as typeof method & { transport?: never }],
    transport: Transport.mcpSdk(),
    secretKey: randomBytes(32).toString('hex'),
    realm: 'mpp-mcp-seller.test',
  });
  let credentials = 0;
  let runs = 0;
  const newServer = () => {
    const server = new Server({ name: 'mpp-mcp-seller', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: [{ name: annuity.name, inputSchema: { type: 'object' } }],
    }));
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      if (request.params._meta?.['org.paymentauth/credential']) credentials++;
      const result = await mppx['evm/charge']({ amount: price })({ ...extra, _meta: request.params._meta } as never);
      if (result.status === 402) throw result.challenge;
      const output = await annuity.handler(annuity.input.parse(request.params.arguments), testContext());
      runs++;
      return result.withReceipt({
        content: [{ type: 'text', text: JSON.stringify(output) }],
        structuredContent: output,
      } as never) as never;
    });
    return server;
  };
  const http = createServer((req, res) => {
    void (async () => {
      if (req.method !== 'POST' || req.url !== '/mcp') {
        res.writeHead(405).end();
        return;
      }
      const body = await readJson(req);
      const server = newServer();
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      res.on('close', () => void transport.close().then(() => server.close()));
      await server.connect(transport);
      await transport.handleRequest(req, res, body);
    })().catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    credentials: () => credentials,
    runs: () => runs,
    close: () => new Promise<void>((resolve) => http.close(() => resolve())),
  };
}
