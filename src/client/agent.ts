/** The agent side's composition root: store, wallets, budget and remote caller from one configuration. */
import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import { openStore } from '../store/open.js';
import type { Store } from '../store/store.js';
import { tools } from '../../tools/index.js';
import type { AgentToolDeps } from './agent-tools.js';
import { Budget } from './budget.js';
import { RemoteCaller } from './caller.js';
import { closeMcpRemotes } from './mcp-remote.js';
import { loadWallets, type Wallets } from './wallets.js';

/** Everything remote mode and `tollbooth call` run on. */
export interface Agent extends AgentToolDeps {
  caller: RemoteCaller;
  log: Logger;
  close(): Promise<void>;
}

/** Problems with the agent-side settings that must stop start-up (each names the variable to fix). */
export function agentProblems(config: Config): string[] {
  const problems: string[] = [];
  const known = new Set(tools.map((t) => t.name));
  const unknown = (config.client.budget.tools ?? []).filter((name) => !known.has(name));
  if (unknown.length > 0)
    problems.push(`BUDGET_TOOLS names unknown tools (${unknown.join(', ')}); known: ${[...known].join(', ')}`);
  if (Object.keys(config.client.remote).length === 0)
    problems.push('no remote deployment: pass --remote <base url> or set REMOTE_URL');
  return problems;
}

/** Opens the store and loads the wallets; `store` may be given (tests). */
export async function createAgent(config: Config, log: Logger, store?: Store): Promise<Agent> {
  const opened = store ?? (await openStore(config, log));
  let wallets: Wallets;
  try {
    wallets = await loadWallets(config.client.wallets, config.networks);
  } catch (err) {
    await opened.close();
    throw err;
  }
  const budget = new Budget(opened, config.client.budget);
  const settings = config.client;
  const caller = new RemoteCaller({ settings, networks: config.networks, store: opened, wallets, budget, log });
  if (wallets.addresses.stellar)
    log.warn('WALLET_STELLAR_SECRET is set, but this client cannot pay on Stellar yet; Stellar options are skipped');
  const close = async () => {
    await closeMcpRemotes();
    await opened.close();
  };
  return { settings, networks: config.networks, store: opened, wallets, budget, caller, log, close };
}
