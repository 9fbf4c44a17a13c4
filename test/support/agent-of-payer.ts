import { createAgent, type Agent } from '../../src/agent/agent.js';
import { loadAgentConfig } from '../../src/agent/settings.js';
import { silentLogger } from '../../src/shared/log.js';
import { openStore } from '../../src/store/open.js';
import { agentDataDir } from './agent.js';
import { LOCAL_NETWORK, type PaidEnvironment } from './paid.js';

/** What a test file closes and removes after its tests: the agents it made and their data directories. */
export interface MadeAgents {
  agents: Agent[];
  dirs: string[];
}

/**
 * The in-process agent side of payer `i` of `paid`, with its own store, as `tollbooth fetch` builds it: the payer's key,
 * the environment's network table, its network allowed; `env` adds or overrides settings. Recorded in `made`.
 */
export async function agentOfPayer(
  paid: PaidEnvironment,
  i: number,
  env: Record<string, string>,
  made: MadeAgents,
): Promise<Agent> {
  const dataDir = agentDataDir();
  made.dirs.push(dataDir);
  const key = paid.chain.accounts.find((a) => a.address === paid.payers[i]!.address)!.privateKey;
  const config = loadAgentConfig({
    DATA_DIR: dataDir,
    NETWORKS_JSON: paid.env.NETWORKS_JSON!,
    WALLET_EVM_PRIVATE_KEY: key,
    BUDGET_NETWORKS: LOCAL_NETWORK,
    ...env,
  });
  const agent = await createAgent(config, silentLogger, openStore);
  made.agents.push(agent);
  return agent;
}
