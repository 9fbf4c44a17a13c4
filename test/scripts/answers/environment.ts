/**
 * The deterministic environments a build is recorded in: a local chain with the in-process facilitator and every
 * look-alike upstream ("paid"), and the embedded defaults without a facilitator ("defaults"). Both fix the pay-to
 * addresses and the MPP key, start on a fresh DATA_DIR and never reach the internet (RPCs point at a closed port).
 */
import { PAY_TO_ENV } from '../../support/pay-to.js';
import { startPaidEnvironment, type PaidEnvironment } from '../../support/paid.js';
import { spawnServe, type SpawnedServer } from '../../support/spawn.js';
import { startDexScreenerLookalike } from '../../support/upstreams/dexscreener.js';
import { startGoPlusLookalike } from '../../support/upstreams/goplus.js';
import { startHyperliquidLookalike } from '../../support/upstreams/hyperliquid.js';
import { startKalshiLookalike } from '../../support/upstreams/kalshi.js';
import type { Lookalike } from '../../support/upstreams/server.js';
import { PANEL_KEY, startSmmPanelLookalike } from '../../support/upstreams/smm-panel.js';
import { startStablecoinsLookalike } from '../../support/upstreams/stablecoins.js';
import { startWorldBankLookalike } from '../../support/upstreams/worldbank.js';
import { startYieldsLookalike } from '../../support/upstreams/yields.js';

/** The fixed MPP key of every recording (challenge ids are HMACs under it). */
export const MPP_SECRET = 'answers-compare-mpp-secret-key-0123456789abcdef';

/** An RPC nobody answers: the wallet tools fail the same way on every run instead of reaching the internet. */
const CLOSED_RPC = 'http://127.0.0.1:9';

/** The look-alike upstreams and the configuration variable that points the server at each. */
async function startLookalikes(): Promise<{ env: Record<string, string>; stop: () => Promise<void> }> {
  const started: Array<[string, Lookalike]> = [
    ['HYPERLIQUID_API_URL', await startHyperliquidLookalike()],
    ['DEFILLAMA_STABLECOINS_URL', await startStablecoinsLookalike()],
    ['DEFILLAMA_YIELDS_URL', await startYieldsLookalike()],
    ['WORLDBANK_API_URL', await startWorldBankLookalike()],
    ['KALSHI_API_URL', await startKalshiLookalike()],
    ['GOPLUS_API_URL', await startGoPlusLookalike()],
    ['DEXSCREENER_API_URL', await startDexScreenerLookalike()],
    ['SMM_PANEL_URL', await startSmmPanelLookalike()],
  ];
  const env = Object.fromEntries(started.map(([name, l]) => [name, l.url]));
  return {
    env: { ...env, SMM_PANEL_KEY: PANEL_KEY },
    stop: async () => {
      for (const [, l] of started) await l.stop();
    },
  };
}

/** A running configuration: its name, the server, and the chain when it can settle. */
export interface RecordingTarget {
  name: string;
  server: SpawnedServer;
  paid?: PaidEnvironment;
  stop(): Promise<void>;
}

/** The EVM networks of the embedded table, whose RPC the wallet tools and the facilitator would otherwise reach. */
const DEFAULT_EVM_NETWORKS = [8453, 137, 42161, 143, 43114, 1329, 10, 4663, 42220];

/** NETWORKS_JSON: the given extra entries, and every default EVM network's RPC pointed at the closed port. */
function networksJson(extra: readonly unknown[]): string {
  const closed = DEFAULT_EVM_NETWORKS.map((id) => ({ id: `eip155:${id}`, rpcUrl: CLOSED_RPC }));
  return JSON.stringify({ networks: [...extra, ...closed] });
}

/** The settings shared by both configurations (`networks`: entries added to the embedded table). */
function baseEnv(upstreams: Record<string, string>, networks: readonly unknown[] = []): Record<string, string> {
  return {
    ...PAY_TO_ENV,
    ...upstreams,
    NETWORKS_JSON: networksJson(networks),
    MPP_SECRET_KEY: MPP_SECRET,
    RPC_URLS: JSON.stringify({ base: CLOSED_RPC, solana: CLOSED_RPC, 'solana-devnet': CLOSED_RPC }),
    UPSTREAM_RETRIES: '0',
    // A recording sends hundreds of calls from one address within a minute; the per-address limit would answer 429.
    RATE_LIMIT_IP_PER_MINUTE: '0',
  };
}

/** Starts `cli serve` on the local chain with the in-process facilitator and the look-alikes. */
export async function startPaidTarget(cli: string): Promise<RecordingTarget> {
  const upstreams = await startLookalikes();
  const paid = await startPaidEnvironment(4);
  const { NETWORKS_JSON: local, ...paidEnv } = paid.env;
  const networks = (JSON.parse(local!) as { networks: unknown[] }).networks;
  const env = { ...paidEnv, ...baseEnv(upstreams.env, networks), PAY_TO_EVM: paid.payTo };
  const server = await spawnServe(env, [], cli).catch(async (err) => {
    await paid.stop();
    await upstreams.stop();
    throw err;
  });
  return {
    name: 'paid',
    server,
    paid,
    stop: async () => {
      await server.stop();
      await paid.stop();
      await upstreams.stop();
    },
  };
}

/** Starts `cli serve` on the embedded defaults (mainnet table, no facilitator), look-alikes behind it. */
export async function startDefaultsTarget(cli: string): Promise<RecordingTarget> {
  const upstreams = await startLookalikes();
  const server = await spawnServe(baseEnv(upstreams.env), [], cli).catch(async (err) => {
    await upstreams.stop();
    throw err;
  });
  return {
    name: 'defaults',
    server,
    stop: async () => {
      await server.stop();
      await upstreams.stop();
    },
  };
}
