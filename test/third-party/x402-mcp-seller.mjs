// An MCP server charging through Vercel's `x402-mcp` 0.0.5 (`createPaidMcpHandler` and `paidTool`, x402 version 1
// over MCP: the challenge in an error result's structuredContent, the payment in `_meta["x402.payment"]`), run by
// test/agent/third-party-mcp.test.ts in a child process. Its packages come from test/third-party/node_modules only.
// The handler is a web-standard `(Request) => Response` (mcp-handler, written for Next.js routes); a few lines of
// node:http serve it here, the Next.js runtime is not needed.
//
// Env: PORT (127.0.0.1), PAY_TO, PRICE (e.g. "$0.001"), FACILITATOR_URL (an x402 version 1 facilitator).
// Serves MCP at POST /mcp with one paid tool `get_quote` on `base-sepolia`; `GET /runs` (free) counts its runs.
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

// Resolved from this folder, so test/third-party/node_modules is the first place looked in.
const require = createRequire(import.meta.url);
const load = (name) => import(pathToFileURL(require.resolve(name)).href);
const { createPaidMcpHandler } = await load('x402-mcp/server');

let runs = 0;
const handler = createPaidMcpHandler(
  (server) => {
    server.paidTool('get_quote', 'A quote (x402-mcp seller)', { price: process.env.PRICE }, {}, {}, async () => {
      runs++;
      return { content: [{ type: 'text', text: JSON.stringify({ quote: 'mcp knowledge', n: runs }) }] };
    });
  },
  { serverInfo: { name: 'x402-mcp-seller', version: '1.0.0' } },
  { recipient: process.env.PAY_TO, facilitator: { url: process.env.FACILITATOR_URL }, network: 'base-sepolia' },
);

/** The node request as a web Request. */
async function webRequest(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers.set(name, value);
  return new Request(`http://${req.headers.host}${req.url}`, { method: req.method, headers, body });
}

const server = createServer((req, res) => {
  if (req.url === '/runs')
    return void res.writeHead(200, { 'content-type': 'application/json' }).end(`{"runs":${runs}}`);
  void (async () => {
    const answer = await handler(await webRequest(req));
    // Whole, once the stream ends: the answer to a paid call leaves only after the seller settled, so a test that
    // loses it loses a settled answer (a streamed header would leave before, and race the agent's re-send).
    const body = Buffer.from(await answer.arrayBuffer());
    res.writeHead(answer.status, Object.fromEntries(answer.headers)).end(body);
  })().catch((err) => {
    process.stderr.write(`${err?.stack ?? err}\n`);
    if (!res.headersSent) res.writeHead(500);
    res.end();
  });
});
server.listen(Number(process.env.PORT), '127.0.0.1', () => process.stdout.write('listening\n'));
