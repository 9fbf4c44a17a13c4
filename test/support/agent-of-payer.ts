import algosdk from 'algosdk';
import { createAgent, type Agent } from '../../src/agent/agent.js';
import { loadAgentConfig } from '../../src/agent/settings.js';
import { silentLogger } from '../../src/shared/log.js';
import { openStore } from '../../src/store/open.js';
import { agentDataDir } from './agent.js';
import type { AlgorandEnvironment } from './chain/algorand.js';
import type { SolanaEnvironment } from './chain/solana-env.js';
import type { StellarEnvironment } from './chain/stellar.js';
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
  const key = paid.chain.accounts.find((a) => a.address === paid.payers[i]!.address)!.privateKey;
  const settings = {
    NETWORKS_JSON: paid.env.NETWORKS_JSON!,
    WALLET_EVM_PRIVATE_KEY: key,
    BUDGET_NETWORKS: LOCAL_NETWORK,
  };
  return madeAgent({ ...settings, ...env }, made);
}

/** The in-process agent side of Stellar payer `i` of `stellar`, with its own store; `env` adds or overrides settings. */
export async function agentOfStellarPayer(
  stellar: StellarEnvironment,
  i: number,
  env: Record<string, string>,
  made: MadeAgents,
): Promise<Agent> {
  const settings = {
    NETWORKS_JSON: stellar.env.NETWORKS_JSON!,
    WALLET_STELLAR_SECRET: stellar.payers[i]!.secret(),
    BUDGET_NETWORKS: stellar.network,
  };
  return madeAgent({ ...settings, ...env }, made);
}

/** The in-process agent side of Algorand payer `i` of `algo`, with its own store; `env` adds or overrides settings. */
export async function agentOfAlgorandPayer(
  algo: AlgorandEnvironment,
  i: number,
  env: Record<string, string>,
  made: MadeAgents,
): Promise<Agent> {
  const settings = {
    NETWORKS_JSON: algo.env.NETWORKS_JSON!,
    WALLET_ALGORAND_MNEMONIC: algosdk.secretKeyToMnemonic(algo.payers[i]!.sk),
    BUDGET_NETWORKS: algo.network,
  };
  return madeAgent({ ...settings, ...env }, made);
}

/** The in-process agent side of the Solana payer whose 64-byte keypair is `secret`, with its own store; `env` adds or overrides settings. */
export async function agentOfSolanaPayer(
  sol: SolanaEnvironment,
  secret: Uint8Array,
  env: Record<string, string>,
  made: MadeAgents,
): Promise<Agent> {
  const settings = {
    NETWORKS_JSON: sol.env.NETWORKS_JSON!,
    WALLET_SOLANA_SECRET_KEY: JSON.stringify([...secret]),
    BUDGET_NETWORKS: sol.network.id,
  };
  return madeAgent({ ...settings, ...env }, made);
}

/** An agent with its own data directory and `env` as its settings, recorded in `made`. */
async function madeAgent(env: Record<string, string>, made: MadeAgents): Promise<Agent> {
  const dataDir = agentDataDir();
  made.dirs.push(dataDir);
  const agent = await createAgent(loadAgentConfig({ DATA_DIR: dataDir, ...env }), silentLogger, openStore);
  made.agents.push(agent);
  return agent;
}
