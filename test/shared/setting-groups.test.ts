import { describe, expect, it } from 'vitest';
import { AgentEnvSchema, DEFAULT_BUDGET, DEFAULT_REMOTE_TIMEOUT_MS } from '../../src/agent/settings.js';
import { loadConfig } from '../../src/config/config.js';
import { EnvSchema } from '../../src/config/env.js';
import {
  AGENT_SETTING_GROUPS,
  allSettings,
  SERVER_SETTING_GROUPS,
  SHARED_SETTINGS,
} from '../../src/shared/setting-groups.js';
import { UPSTREAM_DEFAULTS } from '../../src/config/upstreams.js';

const namesOf = (groups: Record<string, Record<string, unknown>>) =>
  Object.values(groups).flatMap((variables) => Object.keys(variables));

describe('the grouped list of settings', () => {
  it('holds exactly the variables the server schema validates, each in one group', () => {
    const names = namesOf(SERVER_SETTING_GROUPS);
    expect(new Set(names).size).toBe(names.length);
    expect([...names].sort()).toEqual(Object.keys(EnvSchema.shape).sort());
  });

  it("holds exactly the agent schema's variables: its own in the agent group, the shared ones with the server's", () => {
    const agentOnly = namesOf(AGENT_SETTING_GROUPS);
    expect([...agentOnly, ...SHARED_SETTINGS].sort()).toEqual(Object.keys(AgentEnvSchema.shape).sort());
    const both = allSettings().filter((s) => s.side === 'both');
    expect(both.map((s) => s.name).sort()).toEqual([...SHARED_SETTINGS].sort());
  });

  it('never shows a key, secret, mnemonic, token or header value', () => {
    // BASE_URL_TOKEN and REMOTE_URL_TOKEN are base URLs of token-report, not tokens.
    const credentialNames = allSettings().filter(
      (s) => /(KEY|SECRET|MNEMONIC|TOKEN|HEADERS|KEY_ID)$/.test(s.name) && !s.name.endsWith('URL_TOKEN'),
    );
    expect(credentialNames.length).toBeGreaterThan(15);
    for (const setting of credentialNames)
      expect({ [setting.name]: setting.show }).toEqual({ [setting.name]: 'secret' });
    expect(allSettings().find((s) => s.name === 'DATABASE_URL')?.show).toBe('url');
  });

  it('states the defaults the configuration really applies', () => {
    const config = loadConfig({});
    const stated = Object.fromEntries(allSettings().map((s) => [s.name, s.default]));
    const applied: Record<string, unknown> = {
      PORT: config.port,
      HOST: config.host,
      FACILITATOR_TIMEOUT_MS: config.facilitator.timeoutMs,
      FACILITATOR_SETTLE_TIMEOUT_MS: config.facilitator.settleTimeoutMs,
      FACILITATOR_UNSUPPORTED: config.facilitator.unsupported,
      IDEMPOTENCY_TTL_SECONDS: config.idempotencyTtlSeconds,
      BUILDER_CODE: config.builderCode,
      LOG_LEVEL: config.logLevel,
      SHUTDOWN_TIMEOUT_MS: config.shutdownTimeoutMs,
      MCP_MAX_SESSIONS: config.mcpSessions.max,
      MCP_MAX_SESSIONS_PER_CLIENT: config.mcpSessions.perClient,
      MCP_SESSION_IDLE_MS: config.mcpSessions.idleMs,
      WORKER_QUEUE_PER_TOOL: config.workers.queue,
      WORKER_JOB_TIMEOUT_MS: config.workers.timeoutMs,
      RATE_LIMIT_IP_BURST: config.limits.ip!.capacity,
      RATE_LIMIT_IP_PER_MINUTE: config.limits.ip!.refillPerSecond * 60,
      RATE_LIMIT_PAYER_BURST: config.limits.payer!.capacity,
      RATE_LIMIT_PAYER_PER_MINUTE: config.limits.payer!.refillPerSecond * 60,
      RATE_LIMIT_TOOL_BURST: config.limits.tool!.capacity,
      RATE_LIMIT_TOOL_PER_MINUTE: config.limits.tool!.refillPerSecond * 60,
      UPSTREAM_TIMEOUT_MS: config.upstreams.hyperliquid.timeoutMs,
      UPSTREAM_RETRIES: config.upstreams.hyperliquid.retries,
      HYPERLIQUID_API_URL: UPSTREAM_DEFAULTS.hyperliquid.baseUrl,
      KALSHI_API_URL: UPSTREAM_DEFAULTS.kalshi.baseUrl,
      WALLET_STEP_TIMEOUT_MS: config.chainTools.wallet.stepTimeoutMs,
      TRANSFERS_CHUNK_BLOCKS: config.chainTools.transfers.chunkBlocks,
      TRANSFERS_MAX_BLOCKS: config.chainTools.transfers.maxBlocks,
      REMOTE_TIMEOUT_MS: DEFAULT_REMOTE_TIMEOUT_MS,
      BUDGET_MAX_USD_PER_CALL: DEFAULT_BUDGET.maxUsdPerCall,
      BUDGET_MAX_USD_PER_DAY: DEFAULT_BUDGET.maxUsdPerDay,
    };
    for (const [name, value] of Object.entries(applied))
      expect({ [name]: stated[name] }).toEqual({ [name]: String(value) });
  });
});
