import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config/config.js';
import { LIMIT_DEFAULTS, limitSettings, parseTrustProxy } from '../../src/limits/settings.js';

describe('abuse-limit settings', () => {
  it('turns per-minute rates and bursts into buckets, with defaults for everything', () => {
    const settings = limitSettings({ RATE_LIMIT_PAYER_PER_MINUTE: 30, RATE_LIMIT_PAYER_BURST: 5 }, undefined);
    expect(settings.ip).toEqual({
      capacity: LIMIT_DEFAULTS.ip.burst,
      refillPerSecond: LIMIT_DEFAULTS.ip.perMinute / 60,
    });
    expect(settings.payer).toEqual({ capacity: 5, refillPerSecond: 0.5 });
    expect(settings.tool).toEqual({
      capacity: LIMIT_DEFAULTS.tool.burst,
      refillPerSecond: LIMIT_DEFAULTS.tool.perMinute / 60,
    });
    expect(settings.shared).toBe(false);
  });

  it('turns a limit off with a rate of 0, and takes per-tool replacements from RATE_LIMIT_TOOLS', () => {
    const settings = limitSettings(
      {
        RATE_LIMIT_IP_PER_MINUTE: 0,
        RATE_LIMIT_TOOLS: '{"solidity-scan":{"perMinute":60,"burst":10},"annuity":{"perMinute":0,"burst":1}}',
      },
      undefined,
    );
    expect(settings.ip).toBeNull();
    expect(settings.tools).toEqual({ 'solidity-scan': { capacity: 10, refillPerSecond: 1 }, annuity: null });
  });

  it('shares the buckets through the store when DATABASE_URL is set, unless RATE_LIMIT_SHARED says otherwise', () => {
    expect(limitSettings({}, 'postgres://db/x').shared).toBe(true);
    expect(limitSettings({ RATE_LIMIT_SHARED: 'false' }, 'postgres://db/x').shared).toBe(false);
    expect(limitSettings({ RATE_LIMIT_SHARED: 'true' }, undefined).shared).toBe(true);
  });

  it('refuses RATE_LIMIT_TOOLS that is not a JSON object of {perMinute, burst}', () => {
    expect(() => limitSettings({ RATE_LIMIT_TOOLS: 'solidity-scan=60' }, undefined)).toThrow(
      /RATE_LIMIT_TOOLS must be a JSON object/,
    );
    expect(() => limitSettings({ RATE_LIMIT_TOOLS: '{"annuity":{"perMinute":60}}' }, undefined)).toThrow(
      /RATE_LIMIT_TOOLS/,
    );
  });

  it('reads TRUST_PROXY as express does: booleans, a hop count, or addresses, ranges and named ranges', () => {
    expect(parseTrustProxy(undefined)).toBe(false);
    expect(parseTrustProxy('true')).toBe(true);
    expect(parseTrustProxy('2')).toBe(2);
    expect(parseTrustProxy('loopback, 10.0.0.0/8, fd00::/8, 192.0.2.1')).toBe('loopback,10.0.0.0/8,fd00::/8,192.0.2.1');
    expect(() => parseTrustProxy('my-balancer')).toThrow(/TRUST_PROXY: my-balancer/);
    expect(() => parseTrustProxy('10.0.0.0/33')).toThrow(/TRUST_PROXY/);
  });

  it('are part of the configuration, and a bad value stops start-up with a ConfigError naming the variable', () => {
    const config = loadConfig({ TRUST_PROXY: 'uniquelocal', RATE_LIMIT_IP_BURST: '7' });
    expect(config.trustProxy).toBe('uniquelocal');
    expect(config.limits.ip?.capacity).toBe(7);
    expect(() => loadConfig({ TRUST_PROXY: 'anywhere' })).toThrow(ConfigError);
    expect(() => loadConfig({ RATE_LIMIT_IP_BURST: '0' })).toThrow(/RATE_LIMIT_IP_BURST/);
    expect(() => loadConfig({ RATE_LIMIT_SHARED: 'yes' })).toThrow(/RATE_LIMIT_SHARED/);
  });
});
