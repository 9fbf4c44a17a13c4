/** `tollbooth stdio --remote <url>…`: the tools each remote publishes, over stdio, paid under the user's budget. */
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { InFlight } from '../shared/in-flight.js';
import type { Logger } from '../shared/log.js';
import { ConfigError } from '../shared/env.js';
import { BoundedStdioServerTransport } from '../shared/stdio-transport.js';
import type { OpenSpends } from '../shared/spends.js';
import { agentProblems, createAgent } from './agent.js';
import { usd } from './choose.js';
import { micros } from './budget.js';
import { AGENT_TOOLS } from './agent-tools.js';
import { DISCOVER_TOOLS } from './discover-tools.js';
import { loadCatalog, remotesOfSettings, shownUrl, type RemoteSpec } from './catalog.js';
import { McpRemotes } from './mcp-remote.js';
import { catalogExecutor, REMOTE_INSTRUCTIONS, type RemoteExecutor } from './mcp.js';
import type { AgentConfig } from './settings.js';
import { preloadWallets } from './wallet-sdks.js';

/** What the composition root (src/cli/stdio.ts) gives remote mode: the remotes, and the MCP server to serve their tools. */
export interface RemoteStdioParts {
  /** The remotes (`--remote [prefix=]<url>`, repeatable); unset, those of the settings (REMOTE_URL and the group URLs). */
  remotes?: readonly RemoteSpec[];
  /** An MCP server (src/mcp/server.ts) with no registry tools, listing the executor's tools and handing it every call. */
  mcpServer(executor: RemoteExecutor, instructions: string): { connect(transport: Transport): Promise<void> };
  /** Opens the spending ledger (the store's opener, src/store/open.ts). */
  openSpends: OpenSpends;
}

/** How often remote mode re-checks on chain the receipts the chain did not confirm yet (and once at start). */
const RECHECK_INTERVAL_MS = 5 * 60_000;

/** How long a closing stdio server waits for calls still paying or running, so no payment is left without its outcome recorded. */
const DRAIN_MS = 120_000;

/** Serves remote mode over stdio until the client closes the connection. */
export async function runRemoteStdio(config: AgentConfig, log: Logger, parts: RemoteStdioParts): Promise<void> {
  const remotes = parts.remotes ?? remotesOfSettings(config.settings.remote);
  const reserved = [...AGENT_TOOLS, ...DISCOVER_TOOLS].map((t) => t.name);
  // The connections the catalog opens are the ones calls use: the agent holds them and closes them.
  const mcp = new McpRemotes();
  // The SDKs the start waits for (an EVM key's account, the other families') load while the remotes list their tools.
  preloadWallets(config.settings.wallets);
  const catalog = await loadCatalog(mcp, remotes, config.settings.timeoutMs, log, reserved);
  const problems = agentProblems(
    config,
    catalog.map((t) => t.target),
  );
  if (problems.length > 0) {
    await mcp.close();
    throw new ConfigError(`Invalid configuration for remote mode:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
  // An EVM key's signing schemes (most of its start) load once the host has its answers; every call waits for them.
  const agent = await createAgent(config, log, parts.openSpends, mcp, { deferEvmSchemes: true });
  agent.receiptChecks.recheckEvery(RECHECK_INTERVAL_MS);
  const remote = catalogExecutor(agent.caller, agent, catalog);
  // The remote tools' calls are counted while they pay and run, so closing waits for them.
  const calls = new InFlight();
  const server = parts.mcpServer(
    {
      ...remote,
      extra: (name, args, session) =>
        calls.run(async () => {
          await agent.wallets.ready();
          return remote.extra(name, args, session);
        }),
    },
    REMOTE_INSTRUCTIONS,
  );
  const transport = new BoundedStdioServerTransport({
    onOversizedLine: (bytes) => log.warn('stdio line over the limit discarded', { bytes }),
  });
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
  agent.wallets.ready().catch((err: Error) => log.error('the wallets could not load', { reason: err.message }));
  logReady(config, log, { remotes, tools: catalog.length, wallets: agent.wallets.addresses });
}

/** The start line of remote mode (remotes, tools, wallets, budget), and a warning when no wallet pays. */
function logReady(
  config: AgentConfig,
  log: Logger,
  started: { remotes: readonly RemoteSpec[]; tools: number; wallets: Record<string, string> },
): void {
  const { budget } = config.settings;
  log.info('tollbooth MCP stdio ready (remote mode)', {
    remotes: started.remotes.map((r) => shownUrl(r.url)),
    tools: started.tools,
    wallets: started.wallets,
    budget: {
      perCall: usd(micros(budget.maxUsdPerCall)),
      perDay: usd(micros(budget.maxUsdPerDay)),
      ...(budget.askAboveUsd !== undefined ? { askAbove: usd(micros(budget.askAboveUsd)) } : {}),
    },
  });
  if (Object.keys(started.wallets).length === 0)
    log.warn(
      'no wallet configured: paid tools answer with their payment requirements (set WALLET_EVM_PRIVATE_KEY, WALLET_SOLANA_SECRET_KEY or WALLET_ALGORAND_MNEMONIC)',
    );
}
