/**
 * A stateless MCP seller look-alike on 127.0.0.1: the MCP SDK's server over streamable HTTP (JSON answers), a new
 * server per request, with the request handlers the test gives it.
 */
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';

/** A started look-alike: its base URL (the server answers on any path) and how to stop it. */
export interface McpLookAlike {
  url: string;
  close(): Promise<void>;
}

/** Starts a look-alike whose MCP server `setUp` equips for each request (its tools/list, tools/call handlers). */
export async function startMcpLookAlike(setUp: (server: Server) => void): Promise<McpLookAlike> {
  const http: HttpServer = createServer((req, res) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const server = new Server({ name: 'look-alike', version: '1.0.0' }, { capabilities: { tools: {} } });
      setUp(server);
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      res.on('close', () => void transport.close().then(() => server.close()));
      await server.connect(transport);
      await transport.handleRequest(req, res, JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown);
    })().catch(() => res.writeHead(500).end());
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}`,
    close: async () => {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
