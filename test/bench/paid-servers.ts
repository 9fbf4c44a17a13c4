/**
 * The processes of the paid comparison and what they are configured to sell: one EVM network (Base Sepolia's id and
 * USDC address, EIP-712 domain USDC/2), 1000 atomic units, one pay-to, 300 s timeout, for Tollbooth's built CLI and
 * for the official @x402/express server, both settling through the stub facilitator over HTTP.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { BARE_SERVER, CLI, OFFICIAL_SERVER, STUB_FACILITATOR, type ProcSpec } from './paid-procs.js';

/** What both servers sell. */
export const SALE = {
  network: 'eip155:84532',
  asset: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
  tokenName: 'USDC',
  tokenVersion: '2',
  payTo: '0x2222222222222222222222222222222222222222',
  amount: '1000',
  maxTimeoutSeconds: 300,
} as const;

/** Rate limits on, but far above anything the run can send (per minute and burst). */
const HIGH_LIMITS = Object.fromEntries(
  ['IP', 'PAYER', 'TOOL'].flatMap((k) => [
    [`RATE_LIMIT_${k}_PER_MINUTE`, '100000000'],
    [`RATE_LIMIT_${k}_BURST`, '100000000'],
  ]),
);

/** Where the batch-settlement part runs: the local chain (Base's id) and the facilitator's relayer key on it. */
export interface BatchChain {
  rpcUrl: string;
  chainId: number;
  facilitatorKey: string;
}

/**
 * The stub facilitator (official x402Facilitator + EVM exact scheme on a chain answered from memory), with the
 * official batch-settlement scheme on `batch`'s chain as well when given.
 */
export function facilitatorSpec(batch?: BatchChain): ProcSpec {
  const batchEnv: Record<string, string> = batch
    ? {
        BATCH_RPC_URL: batch.rpcUrl,
        BATCH_CHAIN_ID: String(batch.chainId),
        BATCH_FACILITATOR_KEY: batch.facilitatorKey,
      }
    : {};
  return {
    name: 'facilitator',
    args: [STUB_FACILITATOR],
    env: {
      NETWORK: SALE.network,
      ASSET: SALE.asset,
      TOKEN_NAME: SALE.tokenName,
      TOKEN_VERSION: SALE.tokenVersion,
      ...batchEnv,
    },
    expect402: false,
    path: '/supported',
  };
}

/**
 * `node dist/bin/cli.js serve`: default tables plus the sale's network entry, remote facilitator, SQLite store, info
 * logs to a file; `extraNetworks` and `extraEnv` add entries and settings (the batch-settlement runs).
 */
export function oursSpec(
  facilitatorUrl: string,
  nodeFlags: string[] = [],
  extra: { networks?: object[]; env?: Record<string, string>; name?: string } = {},
): ProcSpec {
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-paid-ours-'));
  const network = {
    id: SALE.network,
    family: 'evm',
    asset: SALE.asset,
    decimals: 6,
    name: SALE.tokenName,
    version: SALE.tokenVersion,
    label: 'Base Sepolia',
  };
  return {
    name: extra.name ?? 'tollbooth',
    args: [CLI, 'serve'],
    nodeFlags,
    env: {
      HOST: '127.0.0.1',
      FACILITATOR_URL: facilitatorUrl,
      NETWORKS_JSON: JSON.stringify({ networks: [network, ...(extra.networks ?? [])] }),
      PAY_TO_EVM: SALE.payTo,
      DATA_DIR: dataDir,
      ...HIGH_LIMITS,
      ...extra.env,
    },
    tempDir: dataDir,
  };
}

/** The official express + @x402/express server selling the same route (`extra` switches it to batch settlement). */
export function officialSpec(
  facilitatorUrl: string,
  nodeFlags: string[] = [],
  extra: { env?: Record<string, string>; name?: string } = {},
): ProcSpec {
  return {
    name: extra.name ?? '@x402/express',
    args: [OFFICIAL_SERVER],
    nodeFlags,
    env: {
      FACILITATOR_URL: facilitatorUrl,
      NETWORK: SALE.network,
      ASSET: SALE.asset,
      TOKEN_NAME: SALE.tokenName,
      TOKEN_VERSION: SALE.tokenVersion,
      PAY_TO: SALE.payTo,
      AMOUNT: SALE.amount,
      MAX_TIMEOUT_SECONDS: String(SALE.maxTimeoutSeconds),
      ...extra.env,
    },
  };
}

/** A bare express process answering a fixed small 402. */
export function bareSpec(): ProcSpec {
  return { name: 'bare express', args: [BARE_SERVER], env: {} };
}

/** The counters of the stub facilitator (GET /stats). */
export interface FacilitatorStats {
  verify: { calls: number; valid: number; invalid: number; reasons: Record<string, number> };
  settle: { calls: number; success: number; failed: number; reasons: Record<string, number> };
  supported: number;
  connections: number;
  chainTransfers: number;
  chainReplaysRefused: number;
  settledNonces: number;
  /** `<scheme>:<verify|settle>` -> calls. */
  byScheme: Record<string, number>;
}

/** Reads the facilitator's counters. */
export async function facilitatorStats(url: string): Promise<FacilitatorStats> {
  const res = await fetch(`${url}/stats`);
  return (await res.json()) as FacilitatorStats;
}

/** The entry of a server's own 402 challenge for the sale's network (exact scheme), checked against the sale. */
export async function challengeEntry(serverUrl: string): Promise<PaymentRequirements> {
  const challenge = await paymentRequired(serverUrl);
  const entry = challenge.accepts.find((a) => a.network === SALE.network && a.scheme === 'exact');
  if (!entry) throw new Error(`${serverUrl} does not offer exact on ${SALE.network}`);
  const extra = entry.extra as { name?: string; version?: string };
  const same =
    entry.amount === SALE.amount &&
    entry.asset.toLowerCase() === SALE.asset.toLowerCase() &&
    entry.payTo.toLowerCase() === SALE.payTo.toLowerCase() &&
    entry.maxTimeoutSeconds === SALE.maxTimeoutSeconds &&
    extra.name === SALE.tokenName &&
    extra.version === SALE.tokenVersion;
  if (!same) throw new Error(`${serverUrl} offers a different sale: ${JSON.stringify(entry)}`);
  return entry;
}

/** A server's 402 challenge for a bare POST /api/annuity (the PAYMENT-REQUIRED header, decoded). */
export async function paymentRequired(serverUrl: string): Promise<PaymentRequired> {
  const res = await fetch(`${serverUrl}/api/annuity`, { method: 'POST' });
  await res.arrayBuffer();
  const header = res.headers.get('payment-required');
  if (res.status !== 402 || !header)
    throw new Error(`${serverUrl} answered ${res.status} without a PAYMENT-REQUIRED header`);
  return JSON.parse(Buffer.from(header, 'base64').toString('utf8')) as PaymentRequired;
}
