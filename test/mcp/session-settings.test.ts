import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/config.js';
import { sharedValidator } from '../../src/mcp/validator.js';

describe('MCP session settings', () => {
  it('bounds sessions by default: 1000 in all, 32 per client, 10 minutes idle', () => {
    expect(loadConfig({}).mcpSessions).toEqual({ max: 1000, perClient: 32, idleMs: 600_000 });
  });

  it('reads MCP_MAX_SESSIONS, MCP_MAX_SESSIONS_PER_CLIENT and MCP_SESSION_IDLE_MS', () => {
    const env = { MCP_MAX_SESSIONS: '50', MCP_MAX_SESSIONS_PER_CLIENT: '5', MCP_SESSION_IDLE_MS: '60000' };
    expect(loadConfig(env).mcpSessions).toEqual({ max: 50, perClient: 5, idleMs: 60_000 });
  });

  it('lowers the default per-client cap to a smaller MCP_MAX_SESSIONS', () => {
    expect(loadConfig({ MCP_MAX_SESSIONS: '10' }).mcpSessions.perClient).toBe(10);
  });

  it('refuses caps that are not positive whole numbers, and a per-client cap above the total', () => {
    for (const env of [{ MCP_MAX_SESSIONS: '0' }, { MCP_MAX_SESSIONS: 'many' }, { MCP_MAX_SESSIONS_PER_CLIENT: '1.5' }])
      expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig({ MCP_MAX_SESSIONS: '10', MCP_MAX_SESSIONS_PER_CLIENT: '20' })).toThrow(
      /MCP_MAX_SESSIONS_PER_CLIENT \(20\) must not exceed MCP_MAX_SESSIONS \(10\)/,
    );
  });
});

describe('the shared JSON Schema validator of MCP servers', () => {
  it('compiles each distinct schema once, whatever object carries it, and validates with it', () => {
    const schema = () => ({ type: 'object' as const, properties: { approve: { type: 'boolean' as const } } });
    const validator = sharedValidator();
    expect(sharedValidator()).toBe(validator);
    const check = validator.getValidator(schema());
    expect(validator.getValidator(schema())).toBe(check);
    expect(check({ approve: true }).valid).toBe(true);
    expect(check({ approve: 'yes' }).valid).toBe(false);
  });
});
