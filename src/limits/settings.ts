import { isIP } from 'node:net';
import { z } from 'zod';
import type { BucketRate } from './bucket.js';

/** The abuse limits of one process, parsed from the RATE_LIMIT_* settings; `null` turns a limit off. */
export interface LimitSettings {
  /** Every HTTP request (routes, /mcp, discovery, unknown paths), by client IP, before anything else is read. */
  ip: BucketRate | null;
  /** Verified paid calls, by payer, before the handler runs. */
  payer: BucketRate | null;
  /** Verified paid calls, by tool (all payers together), before the handler runs. */
  tool: BucketRate | null;
  /** Per-tool replacements of `tool`, by tool name (RATE_LIMIT_TOOLS). */
  tools: Record<string, BucketRate | null>;
  /** Keep the buckets in the store (shared by instances) rather than in this process. */
  shared: boolean;
}

/** The raw settings, as the environment gives them. */
export interface LimitEnv {
  RATE_LIMIT_IP_PER_MINUTE?: number;
  RATE_LIMIT_IP_BURST?: number;
  RATE_LIMIT_PAYER_PER_MINUTE?: number;
  RATE_LIMIT_PAYER_BURST?: number;
  RATE_LIMIT_TOOL_PER_MINUTE?: number;
  RATE_LIMIT_TOOL_BURST?: number;
  RATE_LIMIT_TOOLS?: string;
  RATE_LIMIT_SHARED?: 'true' | 'false';
}

/** Defaults sized so that agents calling at any reasonable pace never meet them; a flood does. */
export const LIMIT_DEFAULTS = {
  ip: { perMinute: 1200, burst: 300 },
  payer: { perMinute: 300, burst: 60 },
  tool: { perMinute: 1200, burst: 200 },
} as const;

function rate(perMinute: number, burst: number): BucketRate | null {
  return perMinute > 0 ? { capacity: burst, refillPerSecond: perMinute / 60 } : null;
}

const ToolLimitSchema = z.object({ perMinute: z.number().min(0), burst: z.number().int().min(1) }).strict();
const ToolLimitsSchema = z.record(z.string().min(1), ToolLimitSchema);

/** Parses the RATE_LIMIT_* settings; `databaseUrl` set makes the limits shared unless RATE_LIMIT_SHARED says otherwise. */
export function limitSettings(env: LimitEnv, databaseUrl: string | undefined): LimitSettings {
  let overrides: z.output<typeof ToolLimitsSchema> = {};
  if (env.RATE_LIMIT_TOOLS) {
    let raw: unknown;
    try {
      raw = JSON.parse(env.RATE_LIMIT_TOOLS);
    } catch {
      throw new Error('RATE_LIMIT_TOOLS must be a JSON object such as {"solidity-scan":{"perMinute":60,"burst":10}}');
    }
    const parsed = ToolLimitsSchema.safeParse(raw);
    if (!parsed.success) throw new Error(`RATE_LIMIT_TOOLS: ${z.prettifyError(parsed.error)}`);
    overrides = parsed.data;
  }
  return {
    ip: rate(
      env.RATE_LIMIT_IP_PER_MINUTE ?? LIMIT_DEFAULTS.ip.perMinute,
      env.RATE_LIMIT_IP_BURST ?? LIMIT_DEFAULTS.ip.burst,
    ),
    payer: rate(
      env.RATE_LIMIT_PAYER_PER_MINUTE ?? LIMIT_DEFAULTS.payer.perMinute,
      env.RATE_LIMIT_PAYER_BURST ?? LIMIT_DEFAULTS.payer.burst,
    ),
    tool: rate(
      env.RATE_LIMIT_TOOL_PER_MINUTE ?? LIMIT_DEFAULTS.tool.perMinute,
      env.RATE_LIMIT_TOOL_BURST ?? LIMIT_DEFAULTS.tool.burst,
    ),
    tools: Object.fromEntries(Object.entries(overrides).map(([name, o]) => [name, rate(o.perMinute, o.burst)])),
    shared: env.RATE_LIMIT_SHARED === undefined ? databaseUrl !== undefined : env.RATE_LIMIT_SHARED === 'true',
  };
}

const NAMED_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal']);

function isAddressOrRange(item: string): boolean {
  if (NAMED_RANGES.has(item)) return true;
  const [address = '', prefix, ...rest] = item.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  if (/^\d+$/.test(prefix)) return Number(prefix) <= (family === 4 ? 32 : 128);
  return family === 4 && isIP(prefix) === 4; // 10.0.0.0/255.0.0.0
}

/**
 * Parses TRUST_PROXY into express's `trust proxy` value: `true`/`false`, a number of proxy hops, or a comma-separated
 * list of proxy addresses, CIDR ranges and the names `loopback`, `linklocal`, `uniquelocal`.
 */
export function parseTrustProxy(value: string | undefined): boolean | number | string {
  const text = (value ?? '').trim();
  if (text === '' || text === 'false') return false;
  if (text === 'true') return true;
  if (/^\d+$/.test(text)) return Number(text);
  const items = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = items.filter((item) => !isAddressOrRange(item));
  if (bad.length > 0) {
    throw new Error(
      `TRUST_PROXY: ${bad.join(', ')} is not an IP address, a CIDR range or loopback/linklocal/uniquelocal (or use true, false or a hop count)`,
    );
  }
  return items.join(',');
}
