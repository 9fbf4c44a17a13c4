import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { AnyToolDefinition } from '../../src/tool/tool.js';
import { connectHttpClient } from './mcp.js';
import { countingTools, startPaidEnvironment, type PaidEnvironment } from './paid.js';
import { startTestServer, type TestServer } from './server.js';

/** A local chain with funded payers, one in-process Tollbooth settling on it, and the official MCP client connected. */
export interface PaidServer {
  paid: PaidEnvironment;
  server: TestServer;
  mcp: Client;
  /** How often each of the given tools' handlers ran (empty when the registry is served). */
  runs: Map<string, number>;
  /** Closes the client, the server and the chain. */
  stop(): Promise<void>;
}

/** What {@link startPaidServer} serves: the tools (counted; default the registry) and environment beside the chain's. */
export interface PaidServerOptions {
  tools?: readonly AnyToolDefinition[];
  env?: Record<string, string>;
}

/** Starts a paid environment with `payers` funded payers, Tollbooth on it, and an MCP client; all stopped on failure. */
export async function startPaidServer(payers: number, options: PaidServerOptions = {}): Promise<PaidServer> {
  const paid = await startPaidEnvironment(payers);
  const counted = options.tools ? countingTools(options.tools) : undefined;
  let server: TestServer | undefined;
  try {
    server = await startTestServer({ ...paid.env, ...options.env }, counted ? { tools: counted.tools } : {});
    const mcp = await connectHttpClient(server.url);
    const started = server;
    const stop = async () => {
      await mcp.close();
      await started.close();
      await paid.stop();
    };
    return { paid, server, mcp, runs: counted?.runs ?? new Map<string, number>(), stop };
  } catch (err) {
    await server?.close();
    await paid.stop();
    throw err;
  }
}
