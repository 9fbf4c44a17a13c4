/**
 * The agent side's settings for one payer of a batch-settlement chain, as `tollbooth fetch` reads them from the
 * environment: the payer's key, the chain's network table, budgets on Base, batch settlement allowed.
 */
import { loadAgentConfig, type AgentConfig } from '../../src/agent/settings.js';
import type { BatchSettlementEnvironment } from './chain/batch-settlement.js';
import { BASE_NETWORK } from './chain/batch-settlement-parties.js';

/** Settings of the agent paying as `env.payers[i]`, its store in `dataDir`; `extra` adds or overrides variables. */
export function batchAgentConfig(
  env: BatchSettlementEnvironment,
  i: number,
  dataDir: string,
  extra: Record<string, string> = {},
): AgentConfig {
  const key = env.chain.accounts.find((a) => a.address === env.payers[i]!.address)!.privateKey;
  return loadAgentConfig({
    DATA_DIR: dataDir,
    NETWORKS_JSON: env.env.NETWORKS_JSON!,
    WALLET_EVM_PRIVATE_KEY: key,
    BUDGET_NETWORKS: BASE_NETWORK,
    AGENT_BATCH_SETTLEMENT: 'on',
    ...extra,
  });
}
