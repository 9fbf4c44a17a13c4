import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { privateKeyToAccount } from 'viem/accounts';
import { z } from 'zod';
import {
  DEFAULT_NETWORKS,
  mergeNetworks,
  NetworkFieldsSchema,
  type NetworkEntry,
} from './payments/networks.js';

/** Clearly labelled development pay-to addresses (32 bytes of 0xde), used only when none are configured. */
export const DEV_PAY_TO = {
  evm: '0x00000000000000000000000000000000DeaDBeef',
  svm: 'FzzcmrPGHCwHy6XfqKQybLLMCFhgX7R33axfwNwzrxbw',
  stellar: 'GDPN5XW633PN5XW633PN5XW633PN5XW633PN5XW633PN5XW633PN5MZU',
  algorand: '33PN5XW633PN5XW633PN5XW633PN5XW633PN5XW633PN5XW633PMWXSJFI',
} as const;

/** Development fee-payer / facilitator placeholders (32 bytes of 0xfe), replaced by real signers when configured. */
export const DEV_FEE_PAYER = {
  evm: '0x000000000000000000000000000000000000FeE5',
  svm: 'JAQ5MVHbCkSYRzXunsrNuM2m1LS859PGveHfoYPAmcvZ',
  algorand: '737P57X6737P57X6737P57X6737P57X6737P57X6737P57X6737JO4454Y',
} as const;

const evmAddress = z.string().regex(/^0x[0-9a-fA-F]{40}$/, 'must be a 0x-prefixed 20-byte hex address');
const solanaAddress = z.string().regex(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/, 'must be a base58 Solana address');
const stellarAddress = z.string().regex(/^G[A-Z2-7]{55}$/, 'must be a Stellar G… account id');
const algorandAddress = z.string().regex(/^[A-Z2-7]{58}$/, 'must be a 58-character Algorand address');
const privateKey = z.string().regex(/^0x[0-9a-fA-F]{64}$/, 'must be a 0x-prefixed 32-byte hex private key');
const url = z.string().url();
const optional = <T extends z.ZodType>(s: T) =>
  z.preprocess((v) => (v === '' ? undefined : v), s.optional());

const EnvSchema = z.object({
  NODE_ENV: optional(z.string()),
  PORT: optional(z.coerce.number().int().min(0).max(65535)),
  HOST: optional(z.string()),
  BASE_URL_TOOLS: optional(url),
  BASE_URL_TOKEN: optional(url),
  BASE_URL_SMM: optional(url),
  BASE_URL_TRANSFERS: optional(url),
  PAY_TO_EVM: optional(evmAddress),
  PAY_TO_SOLANA: optional(solanaAddress),
  PAY_TO_STELLAR: optional(stellarAddress),
  PAY_TO_ALGORAND: optional(algorandAddress),
  DATA_DIR: optional(z.string()),
  FACILITATOR_URL: optional(url),
  FACILITATOR_TIMEOUT_MS: optional(z.coerce.number().int().positive()),
  FACILITATOR_SETTLE_TIMEOUT_MS: optional(z.coerce.number().int().positive()),
  FACILITATOR_EVM_PRIVATE_KEY: optional(privateKey),
  FACILITATOR_EVM_ADDRESS: optional(evmAddress),
  SOLANA_FEE_PAYER: optional(solanaAddress),
  ALGORAND_FEE_PAYER: optional(algorandAddress),
  BUILDER_CODE: optional(z.string().regex(/^[a-z0-9_]{1,32}$/, 'must match ^[a-z0-9_]{1,32}$')),
  NETWORKS_FILE: optional(z.string()),
  NETWORKS_JSON: optional(z.string()),
  LOG_LEVEL: optional(z.enum(['info', 'warn', 'error', 'silent'])),
  MCP_ALLOWED_HOSTS: optional(z.string()),
  MCP_SESSION_IDLE_MS: optional(z.coerce.number().int().positive()),
});

const NetworksOverrideSchema = z.object({
  replace: z.boolean().default(false),
  networks: z.array(NetworkFieldsSchema.partial().extend({ id: NetworkFieldsSchema.shape.id })),
});

/** The one parsed, frozen configuration of a Tollbooth process. */
export interface Config {
  production: boolean;
  port: number;
  host: string;
  baseUrls: { tools: string; token: string; smm: string; transfers: string };
  payTo: { evm: string; svm: string; stellar: string; algorand: string };
  /** Families whose pay-to address is a development placeholder. */
  devPayTo: Array<keyof Config['payTo']>;
  dataDir: string;
  facilitator: {
    url: string | undefined;
    timeoutMs: number;
    /** Settlement waits for the chain, so it gets its own, longer limit; past it the outcome is unknown. */
    settleTimeoutMs: number;
    evmPrivateKey: `0x${string}` | undefined;
  };
  /** Addresses published in `extra` (upto facilitatorAddress, Solana/Algorand feePayer). */
  signers: { evm: string; svm: string; algorand: string };
  builderCode: string;
  networks: NetworkEntry[];
  logLevel: 'info' | 'warn' | 'error' | 'silent';
  /** Host names `/mcp` answers to (DNS-rebinding protection): loopback, the base URLs' hosts, MCP_ALLOWED_HOSTS. */
  mcpAllowedHosts: string[];
  /** Streamable-HTTP MCP sessions idle longer than this are closed (clients that never send DELETE). */
  mcpSessionIdleMs: number;
}

/** Thrown for configuration that cannot start a server; the message lists every problem. */
export class ConfigError extends Error {}

/** Reads `<NAME>_FILE` for every known setting NAME that is not set directly (keys and addresses kept out of env). */
function readSecretFiles(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out = { ...env };
  for (const target of Object.keys(EnvSchema.shape)) {
    const file = env[`${target}_FILE`];
    if (!file || out[target] || target === 'NETWORKS_JSON') continue;
    try {
      out[target] = readFileSync(file, 'utf8').trim();
    } catch (err) {
      throw new ConfigError(`Could not read ${target}_FILE (${file}): ${(err as Error).message}`);
    }
  }
  return out;
}

function loadNetworks(file: string | undefined, json: string | undefined): NetworkEntry[] {
  const raw = file ? readFileSync(file, 'utf8') : json;
  if (!raw) return DEFAULT_NETWORKS.map((n) => ({ ...n }));
  const parsed = NetworksOverrideSchema.safeParse(JSON.parse(raw));
  if (!parsed.success) {
    throw new ConfigError(`Invalid network table (${file ?? 'NETWORKS_JSON'}): ${z.prettifyError(parsed.error)}`);
  }
  return mergeNetworks(DEFAULT_NETWORKS, parsed.data.networks, parsed.data.replace);
}

/** Parses configuration from the environment once; throws ConfigError with every problem listed. */
export function loadConfig(rawEnv: NodeJS.ProcessEnv = process.env): Config {
  const parsed = EnvSchema.safeParse(readSecretFiles(rawEnv));
  if (!parsed.success) {
    throw new ConfigError(`Invalid configuration:\n${z.prettifyError(parsed.error)}`);
  }
  const env = parsed.data;
  const production = env.NODE_ENV === 'production';
  const port = env.PORT ?? 4021;
  const local = `http://localhost:${port}`;
  const payTo = {
    evm: env.PAY_TO_EVM ?? DEV_PAY_TO.evm,
    svm: env.PAY_TO_SOLANA ?? DEV_PAY_TO.svm,
    stellar: env.PAY_TO_STELLAR ?? DEV_PAY_TO.stellar,
    algorand: env.PAY_TO_ALGORAND ?? DEV_PAY_TO.algorand,
  };
  const devPayTo = (Object.keys(payTo) as Array<keyof typeof payTo>).filter(
    (k) => payTo[k] === DEV_PAY_TO[k],
  );
  if (production && devPayTo.length > 0) {
    const names = { evm: 'PAY_TO_EVM', svm: 'PAY_TO_SOLANA', stellar: 'PAY_TO_STELLAR', algorand: 'PAY_TO_ALGORAND' };
    throw new ConfigError(
      `NODE_ENV=production requires real pay-to addresses; set ${devPayTo.map((k) => names[k]).join(', ')}.`,
    );
  }
  let networks: NetworkEntry[];
  try {
    networks = loadNetworks(env.NETWORKS_FILE, env.NETWORKS_JSON);
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw new ConfigError(`Could not read the network table: ${(err as Error).message}`);
  }
  const evmKey = env.FACILITATOR_EVM_PRIVATE_KEY as `0x${string}` | undefined;
  const baseUrls = {
    tools: env.BASE_URL_TOOLS ?? local,
    token: env.BASE_URL_TOKEN ?? local,
    smm: env.BASE_URL_SMM ?? local,
    transfers: env.BASE_URL_TRANSFERS ?? local,
  };
  const mcpAllowedHosts = [
    ...new Set([
      'localhost',
      '127.0.0.1',
      '[::1]',
      ...Object.values(baseUrls).map((u) => new URL(u).hostname),
      ...(env.MCP_ALLOWED_HOSTS ?? '').split(',').map((h) => h.trim()).filter(Boolean),
    ]),
  ];
  return Object.freeze({
    production,
    port,
    host: env.HOST ?? '127.0.0.1',
    baseUrls,
    payTo,
    devPayTo,
    dataDir: resolve(env.DATA_DIR ?? 'data'),
    facilitator: {
      url: env.FACILITATOR_URL,
      timeoutMs: env.FACILITATOR_TIMEOUT_MS ?? 15_000,
      settleTimeoutMs: env.FACILITATOR_SETTLE_TIMEOUT_MS ?? 120_000,
      evmPrivateKey: evmKey,
    },
    signers: {
      evm: env.FACILITATOR_EVM_ADDRESS ?? (evmKey ? privateKeyToAccount(evmKey).address : DEV_FEE_PAYER.evm),
      svm: env.SOLANA_FEE_PAYER ?? DEV_FEE_PAYER.svm,
      algorand: env.ALGORAND_FEE_PAYER ?? DEV_FEE_PAYER.algorand,
    },
    builderCode: env.BUILDER_CODE ?? 'tollbooth',
    networks,
    logLevel: env.LOG_LEVEL ?? 'info',
    mcpAllowedHosts,
    mcpSessionIdleMs: env.MCP_SESSION_IDLE_MS ?? 30 * 60_000,
  });
}
