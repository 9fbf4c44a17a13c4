/**
 * The floor of the agent start-up figures of `npm run bench` (j): the official MCP SDK's stdio server with one fixed
 * tool and nothing else (no remote, no store, no wallet), i.e. what any MCP stdio server in Node costs to start.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const server = new Server({ name: 'bare', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({
  tools: [{ name: 'annuity', description: 'fixed', inputSchema: { type: 'object', properties: {} } }],
}));
await server.connect(new StdioServerTransport());
