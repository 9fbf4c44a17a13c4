// An MCP server charging through Cloudflare's `agents` x402 wrapper (`withX402` from `agents/x402`, 0.32.0: x402
// version 2 over MCP, the challenge in an error result's `_meta["x402/error"]` and text, the payment as a base64
// string in `_meta["x402/payment"]`), run by test/agent/third-party-mcp.test.ts in a child process. Its
// packages come from test/third-party/node_modules only. On Cloudflare the server would sit in an `McpAgent` (a
// Durable Object); the wrapper itself only decorates an MCP SDK `McpServer`, so here the SDK's own streamable HTTP
// transport serves it on node:http (stateless: a fresh server per request), and no Workers runtime is needed.
//
// Env: PORT (127.0.0.1), PAY_TO, PRICE_USD (e.g. "0.001"), FACILITATOR_URL (an x402 version 2 facilitator).
// Serves MCP at POST /mcp with one paid tool `get_quote` on eip155:84532; `GET /runs` (free) counts its runs.
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

// Resolved from this folder, so test/third-party/node_modules is the first place looked in.
const require = createRequire(import.meta.url);
const load = (name) => import(pathToFileURL(require.resolve(name)).href);
const { withX402 } = await load('agents/x402');
const { McpServer } = await load('@modelcontextprotocol/sdk/server/mcp.js');
const { StreamableHTTPServerTransport } = await load('@modelcontextprotocol/sdk/server/streamableHttp.js');

let runs = 0;
const config = {
  network: 'eip155:84532',
  recipient: process.env.PAY_TO,
  facilitator: { url: process.env.FACILITATOR_URL },
};

/** One MCP server with the paid tool, as an McpAgent's `init` would build it. */
function paidServer() {
  const server = withX402(new McpServer({ name: 'cloudflare-agents-seller', version: '1.0.0' }), config);
  server.paidTool(
    'get_quote',
    'A quote (Cloudflare agents x402 seller)',
    Number(process.env.PRICE_USD),
    {},
    {},
    async () => {
      runs++;
      return { content: [{ type: 'text', text: JSON.stringify({ quote: 'workers knowledge', n: runs }) }] };
    },
  );
  return server;
}

const http = createServer((req, res) => {
  if (req.url === '/runs')
    return void res.writeHead(200, { 'content-type': 'application/json' }).end(`{"runs":${runs}}`);
  void (async () => {
    const server = paidServer();
    // JSON answers, not a stream: the answer to a paid call leaves only after the seller settled, so a test that
    // loses it loses a settled answer (a stream's header would leave before, and race the agent's re-send).
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => void transport.close().then(() => server.close()));
    await server.connect(transport);
    await transport.handleRequest(req, res);
  })().catch((err) => {
    process.stderr.write(`${err?.stack ?? err}\n`);
    if (!res.headersSent) res.writeHead(500);
    res.end();
  });
});
http.listen(Number(process.env.PORT), '127.0.0.1', () => process.stdout.write('listening\n'));
