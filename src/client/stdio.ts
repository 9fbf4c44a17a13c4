/** `tollbooth stdio --remote <url>`: the same 16 tools over stdio, executed on a remote deployment and paid under the user's budget. */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { ConfigError, type Config } from '../config.js';
import type { Logger } from '../log.js';
import { createMcpServer } from '../mcp/server.js';
import { tools } from '../../tools/index.js';
import { VERSION } from '../version.js';
import { agentProblems, createAgent } from './agent.js';
import { usd } from './choose.js';
import { micros } from './budget.js';
import type { McpExecutor } from '../mcp/server.js';
import { remoteExecutor, REMOTE_INSTRUCTIONS } from './mcp.js';

/** How long a closing stdio server waits for calls still paying or running, so no payment is left without its outcome recorded. */
const DRAIN_MS = 120_000;

/** Counts the executor's calls in flight and resolves `drained` when none is left (or the time limit passed). */
function tracked(executor: McpExecutor): { executor: McpExecutor; drain: (ms: number) => Promise<void> } {
  let inFlight = 0;
  let idle: (() => void) | undefined;
  const count =
    <A extends unknown[], R>(fn: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      inFlight++;
      try {
        return await fn(...args);
      } finally {
        if (--inFlight === 0) idle?.();
      }
    };
  return {
    executor: { ...executor, call: count(executor.call) },
    drain: (ms) =>
      inFlight === 0
        ? Promise.resolve()
        : new Promise<void>((resolve) => {
            idle = resolve;
            setTimeout(resolve, ms).unref();
          }),
  };
}

/** Serves remote mode over stdio until the client closes the connection. */
export async function runRemoteStdio(config: Config, log: Logger): Promise<void> {
  const problems = agentProblems(config);
  if (problems.length > 0)
    throw new ConfigError(`Invalid configuration for remote mode:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  const agent = await createAgent(config, log);
  const calls = tracked(remoteExecutor(agent.caller, agent));
  const server = createMcpServer({
    config,
    tools,
    version: VERSION,
    executor: calls.executor,
    instructions: REMOTE_INSTRUCTIONS,
  });
  const transport = new StdioServerTransport();
  let closing = false;
  const close = () => {
    if (closing) return;
    closing = true;
    // Calls still paying finish first: their outcome (settled, failed, pending) is recorded before the store closes.
    void calls
      .drain(DRAIN_MS)
      .then(() => agent.close())
      .then(() => process.exit(0));
  };
  transport.onclose = close;
  process.stdin.once('end', close);
  await server.connect(transport);
  const { budget } = config.client;
  log.info('tollbooth MCP stdio ready (remote mode)', {
    remote: config.client.remote,
    wallets: agent.wallets.addresses,
    budget: {
      perCall: usd(micros(budget.maxUsdPerCall)),
      perDay: usd(micros(budget.maxUsdPerDay)),
      ...(budget.askAboveUsd !== undefined ? { askAbove: usd(micros(budget.askAboveUsd)) } : {}),
    },
  });
  if (Object.keys(agent.wallets.addresses).length === 0)
    log.warn(
      'no wallet configured: paid tools answer with their payment requirements (set WALLET_EVM_PRIVATE_KEY, WALLET_SOLANA_SECRET_KEY or WALLET_ALGORAND_MNEMONIC)',
    );
}
