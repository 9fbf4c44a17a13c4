/**
 * What the server's configuration (src/config/config.ts) and the agent's settings (src/agent/settings.ts) read the same way:
 * the one configuration error, `<NAME>_FILE` secrets, the field rules of the environment schemas, and the settings
 * both sides read (where the store is, the log level, the network table).
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';

/** Thrown for configuration that cannot start a server or an agent; the message lists every problem. */
export class ConfigError extends Error {}

/** Reads `<NAME>_FILE` for every known setting NAME that is not set directly (keys and addresses kept out of env). */
export function readSecretFiles(env: NodeJS.ProcessEnv, names: readonly string[]): NodeJS.ProcessEnv {
  const out = { ...env };
  for (const target of names) {
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

/** An optional setting: unset or empty is undefined, anything else must pass `schema`. */
export const optional = <T extends z.ZodType>(schema: T) =>
  z.preprocess((v) => (v === '' ? undefined : v), schema.optional());

/** An http(s) URL setting; a value without its scheme (`x402.org/facilitator`) is refused saying what it lacks. */
export const url = z.string().refine((value) => /^https?:\/\/[^/\s]/i.test(value) && URL.canParse(value), {
  error: 'must be a full URL starting with http:// or https:// (e.g. https://x402.org/facilitator)',
});
/** A 0x-prefixed 32-byte hex private key setting (EVM). */
export const privateKey = z.string().regex(/^0x[0-9a-fA-F]{64}$/, 'must be a 0x-prefixed 32-byte hex private key');

/** The settings both sides read: the store's location, the log level, and the network table with its set. */
export const SHARED_ENV = {
  DATA_DIR: optional(z.string()),
  DATABASE_URL: optional(
    z.string().regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// connection URL'),
  ),
  NETWORKS_FILE: optional(z.string()),
  NETWORKS_JSON: optional(z.string()),
  TOLLBOOTH_NETWORK_SET: optional(z.enum(['mainnet', 'testnet'], { error: 'must be mainnet or testnet' })),
  LOG_LEVEL: optional(z.enum(['info', 'warn', 'error', 'silent'])),
};

/** A comma-separated list setting: its trimmed, non-empty items, or undefined when there are none. */
export function list(value: string | undefined): string[] | undefined {
  const items = (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return items.length > 0 ? items : undefined;
}
