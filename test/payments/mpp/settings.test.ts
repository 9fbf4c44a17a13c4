import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config/config.js';
import { silentLogger } from '../../../src/shared/log.js';
import { mppStartProblem } from '../../../src/payments/mpp/settings.js';
import { createRuntime } from '../../../src/runtime/runtime.js';

const KEY = 'a-shared-secret-of-at-least-thirty-two-bytes';
const production = {
  NODE_ENV: 'production',
  PAY_TO_EVM: '0x1111111111111111111111111111111111111111',
  PAY_TO_SOLANA: 'JAQ5MVHbCkSYRzXunsrNuM2m1LS859PGveHfoYPAmcvZ',
  PAY_TO_STELLAR: 'GAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAWHF',
  PAY_TO_ALGORAND: '737P57X6737P57X6737P57X6737P57X6737P57X6737P57X6737JO4454Y',
  // A production start needs a facilitator for every family it sells (nothing is asked before the MPP check).
  FACILITATOR_URL: 'http://127.0.0.1:9/facilitator',
  LOG_LEVEL: 'silent',
};

describe('MPP settings', () => {
  it("are on by default, with the tools base URL's host as realm and a random key of this process when none is set", () => {
    const config = loadConfig({ LOG_LEVEL: 'silent', BASE_URL_TOOLS: 'https://api.example.com:8443/base' });
    expect(config.mpp).toMatchObject({ enabled: true, ephemeralKey: true, realm: 'api.example.com:8443' });
    expect(Buffer.byteLength(config.mpp.secretKey)).toBeGreaterThanOrEqual(32);
    expect(loadConfig({ LOG_LEVEL: 'silent' }).mpp.secretKey).not.toBe(config.mpp.secretKey);
  });

  it('take MPP=off, MPP_REALM and MPP_SECRET_KEY', () => {
    expect(loadConfig({ LOG_LEVEL: 'silent', MPP: 'off' }).mpp.enabled).toBe(false);
    expect(loadConfig({ LOG_LEVEL: 'silent', MPP_REALM: 'pay.example', MPP_SECRET_KEY: KEY }).mpp).toMatchObject({
      realm: 'pay.example',
      secretKey: KEY,
      ephemeralKey: false,
    });
    expect(() => loadConfig({ LOG_LEVEL: 'silent', MPP: 'maybe' })).toThrow(/must be on or off[\s\S]*at MPP/);
  });

  it('read the key from MPP_SECRET_KEY_FILE', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tollbooth-mpp-'));
    try {
      writeFileSync(join(dir, 'key'), `${KEY}\n`);
      expect(loadConfig({ LOG_LEVEL: 'silent', MPP_SECRET_KEY_FILE: join(dir, 'key') }).mpp.secretKey).toBe(KEY);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuse a short key, naming the variable and never the value', () => {
    const attempt = () => loadConfig({ LOG_LEVEL: 'silent', MPP_SECRET_KEY: 'short-secret-value' });
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(/MPP_SECRET_KEY must be at least 32 bytes/);
    expect(attempt).not.toThrow(/short-secret-value/);
  });

  it('make a production server refuse to start without a shared key while MPP is on (instances and restarts must agree on challenge ids)', async () => {
    const config = loadConfig(production);
    expect(mppStartProblem(config.mpp)).toMatch(
      /MPP_SECRET_KEY \(or MPP_SECRET_KEY_FILE\) is required when NODE_ENV=production/,
    );
    await expect(createRuntime(config, { log: silentLogger })).rejects.toThrow(ConfigError);
    expect(mppStartProblem(loadConfig({ ...production, MPP_SECRET_KEY: KEY }).mpp)).toBeUndefined();
    expect(mppStartProblem(loadConfig({ ...production, MPP: 'off' }).mpp)).toBeUndefined();
    expect(mppStartProblem(loadConfig({ LOG_LEVEL: 'silent' }).mpp)).toBeUndefined();
  });
});
