/** The agent side's composition: the store's spending ledger, wallets, budget and remote caller from one configuration. */
import type { Logger } from '../shared/log.js';
import type { ToolEndpoint } from '../shared/tool-endpoint.js';
import type { OpenSpends } from '../shared/spends.js';
import type { AgentToolDeps } from './agent-tools.js';
import { BatchPayer } from './batch-pay.js';
import { refundChannels } from './batch-refund.js';
import { Budget } from './budget.js';
import { RemoteCaller } from './caller.js';
import { McpRemotes } from './mcp-remote.js';
import { ReceiptChecks, receiptCheckWaits } from './receipt-check.js';
import { hasRemote, type AgentConfig } from './settings.js';
import { loadWallets, type Wallets } from './wallets.js';

/** Everything remote mode and `tollbooth call` run on. */
export interface Agent extends AgentToolDeps {
  caller: RemoteCaller;
  log: Logger;
  /** Batch-settlement payments and channels (AGENT_BATCH_SETTLEMENT=on). */
  batch?: BatchPayer;
  /** The on-chain checks of success receipts still running (awaited by `close`). */
  receiptChecks: ReceiptChecks;
  close(): Promise<void>;
}

/** Problems with the agent's settings that must stop start-up (each names the variable to fix); `tools` is the registry. */
export function agentProblems(config: AgentConfig, tools: readonly Pick<ToolEndpoint, 'name'>[]): string[] {
  const problems: string[] = [];
  // `fetch` stands for paying any URL (`tollbooth fetch`).
  const known = new Set([...tools.map((t) => t.name), 'fetch']);
  const unknown = (config.settings.budget.tools ?? []).filter((name) => !known.has(name));
  if (unknown.length > 0)
    problems.push(`BUDGET_TOOLS names unknown tools (${unknown.join(', ')}); known: ${[...known].join(', ')}`);
  if (!hasRemote(config)) problems.push('no remote deployment: pass --remote <base url> or set REMOTE_URL');
  return problems;
}

/**
 * Opens the spending ledger with `openSpends` (the store's opener, given by the composition root) and loads the
 * wallets (`options` as `loadWallets` takes them); remote MCP endpoints are reached through `mcp` (the one the catalog
 * was listed with, if any), which the agent's `close` closes.
 */
export async function createAgent(
  config: AgentConfig,
  log: Logger,
  openSpends: OpenSpends,
  mcp: McpRemotes = new McpRemotes(),
  options: { deferEvmSchemes?: boolean } = {},
): Promise<Agent> {
  const opened = await openSpends(config.store, log);
  const { settings, networks } = config;
  const spends = opened.spends;
  const budget = new Budget(spends, settings.budget);
  const batch =
    settings.batch.enabled && opened.agentChannels
      ? new BatchPayer(opened.agentChannels, settings.batch, spends, budget, log)
      : undefined;
  let wallets: Wallets;
  try {
    wallets = await loadWallets(config.settings.wallets, config.networks, batch?.signer(), options);
  } catch (err) {
    await opened.close();
    throw err;
  }
  const receiptChecks = new ReceiptChecks({
    spends,
    networks,
    log,
    enabled: settings.checkReceipts !== false,
    ...(settings.receiptCheckSeconds !== undefined ? { waits: receiptCheckWaits(settings.receiptCheckSeconds) } : {}),
  });
  const deps = { settings, networks, spends, wallets, budget, log, receiptChecks, mcp };
  const caller = new RemoteCaller({ ...deps, ...(batch ? { batch } : {}) });
  // Channels idle for AGENT_BATCH_IDLE_REFUND_MINUTES are refunded once at start (in the background; close waits).
  const idleMinutes = settings.batch.idleRefundMinutes;
  const sweep =
    batch && idleMinutes !== undefined
      ? wallets
          .ready()
          .then(() => refundChannels({ batch, wallets, log }, { idleMinutes }))
          .catch((err: Error) => log.warn('the idle batch-settlement refunds failed', { reason: err.message }))
      : undefined;
  const close = async () => {
    await sweep;
    // A process's ledger is complete before it ends: the receipt checks still running are waited for (bounded).
    await receiptChecks.close();
    await mcp.close();
    await opened.close();
  };
  return { ...deps, caller, close, ...(batch ? { batch } : {}) };
}
