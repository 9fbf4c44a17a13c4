import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI_PATH } from '../support/mcp.js';

// Spawns the built CLI (`npm run build` first), as an operator runs it.

const dir = mkdtempSync(join(tmpdir(), 'tollbooth-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Runs `tollbooth config <args>` with only `env` (and PATH) in its environment; resolves with its exit code and output. */
function config(
  args: readonly string[],
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI_PATH, 'config', ...args],
      { env: { PATH: process.env.PATH ?? '', DATA_DIR: join(dir, 'data'), ...env } },
      (err, stdout, stderr) =>
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

interface Reported {
  valid: boolean;
  problems: Array<{ variable?: string; message: string }>;
  warnings: Array<{ variable?: string; message: string }>;
  settings: Array<{ name: string; group: string; value: string; source: Record<string, string> }>;
}

const setting = (report: Reported, name: string) => report.settings.find((s) => s.name === name)!;

/** The forms a secret could leak in: as given, hex (either case), base64, base64url and URL-encoded. */
function leakedForms(secret: string): string[] {
  const bytes = Buffer.from(secret, 'utf8');
  return [
    secret,
    bytes.toString('hex'),
    bytes.toString('hex').toUpperCase(),
    bytes.toString('base64').replace(/=+$/, ''),
    bytes.toString('base64url'),
    encodeURIComponent(secret),
  ];
}

const EVM_KEY = `0x${'ab12cd34'.repeat(8)}`;
const WALLET_KEY = `0x${'9f8e7d6c'.repeat(8)}`;
const SECRETS = {
  METRICS_TOKEN: 'metrics-token-that-is-long-enough',
  FACILITATOR_EVM_PRIVATE_KEY: EVM_KEY,
  WALLET_EVM_PRIVATE_KEY: WALLET_KEY,
  CDP_API_KEY_ID: 'cdp-key-id-0123456789',
  CDP_API_KEY_SECRET: randomBytes(64).toString('base64'), // an Ed25519 key as CDP issues them
  SMM_PANEL_KEY: 'smm-panel-key-zyxwvutsrq',
  ALCHEMY_API_KEY: 'alchemy-key-qwertyuiop',
  MPP_SECRET_KEY: 'mpp-secret-key-of-at-least-32-bytes-long!',
};
const DB_PASSWORD = 'pg-password-hunter2';
const HEADER_TOKEN = 'facilitator-bearer-token-123456';
const RPC_KEY = 'rpcpathkey0123456789abcdef';

describe('tollbooth config', () => {
  it('shows every value with its source: a flag, the environment, a _FILE file, or the default', async () => {
    const tokenFile = join(dir, 'token-file');
    writeFileSync(tokenFile, `${SECRETS.METRICS_TOKEN}\n`);
    const { code, stdout } = await config(['--json', '--port', '5123', '--testnet'], {
      HOST: '0.0.0.0',
      METRICS_TOKEN_FILE: tokenFile,
      REMOTE_URL: 'https://tollbooth.example',
    });
    expect(code).toBe(0);
    const report = JSON.parse(stdout) as Reported;
    expect(setting(report, 'PORT')).toMatchObject({
      group: 'server',
      value: '5123',
      source: { kind: 'flag', flag: '--port' },
    });
    expect(setting(report, 'TOLLBOOTH_NETWORK_SET')).toMatchObject({ value: 'testnet', source: { flag: '--testnet' } });
    expect(setting(report, 'HOST')).toMatchObject({ value: '0.0.0.0', source: { kind: 'env', variable: 'HOST' } });
    expect(setting(report, 'METRICS_TOKEN').source).toEqual({
      kind: 'file',
      variable: 'METRICS_TOKEN_FILE',
      path: tokenFile,
    });
    expect(setting(report, 'LOG_LEVEL')).toMatchObject({ value: 'info', source: { kind: 'default' } });
    expect(setting(report, 'REMOTE_URL')).toMatchObject({ group: 'agent', source: { kind: 'env' } });
    expect(setting(report, 'PAY_TO_EVM').group).toBe('payments.evm');
    expect(report.settings.length).toBeGreaterThan(90);
    expect(stdout).not.toContain(SECRETS.METRICS_TOKEN);

    const text = await config(['--port', '5123'], { HOST: '0.0.0.0' });
    expect(text.stdout).toMatch(/^ {2}PORT +5123 +flag --port$/m);
    expect(text.stdout).toMatch(/^ {2}HOST +0\.0\.0\.0 +env HOST$/m);
    expect(text.stdout).toMatch(/^ {2}LOG_LEVEL +info +default$/m);
    expect(text.stdout).toContain('[payments.solana]');
  });

  it('never prints a secret given in the environment or a file, in any encoding, valid or not', async () => {
    const mppFile = join(dir, 'mpp-key');
    writeFileSync(mppFile, SECRETS.MPP_SECRET_KEY);
    const env = {
      ...SECRETS,
      MPP_SECRET_KEY: '',
      MPP_SECRET_KEY_FILE: mppFile,
      DATABASE_URL: `postgres://tollbooth:${DB_PASSWORD}@127.0.0.1:5432/test`,
      FACILITATOR_URL: 'https://facilitator.example/x402',
      FACILITATOR_HEADERS: JSON.stringify({
        'https://facilitator.example/x402': { Authorization: `Bearer ${HEADER_TOKEN}` },
      }),
      RPC_URLS: JSON.stringify({ base: `https://base.example/v2/${RPC_KEY}` }),
      PAY_TO_EVM: '0x1111111111111111111111111111111111111111',
    };
    const broken = { ...env, WALLET_EVM_PRIVATE_KEY: `${WALLET_KEY}ff`, SMM_PANEL_KEY: '' };
    const runs = await Promise.all([
      config([], env),
      config(['--json'], env),
      config(['--check'], broken),
      config(['--json'], broken),
    ]);
    expect(runs.map((r) => r.code)).toEqual([0, 0, 78, 78]);
    const everything = runs.map((r) => r.stdout + r.stderr).join('\n');
    expect(everything).toContain('DATABASE_URL');
    expect(everything).toContain('WALLET_EVM_PRIVATE_KEY');
    const secrets = [
      ...Object.values(SECRETS),
      EVM_KEY.slice(2),
      WALLET_KEY.slice(2),
      DB_PASSWORD,
      HEADER_TOKEN,
      RPC_KEY,
    ];
    for (const secret of secrets)
      for (const form of leakedForms(secret))
        expect({ secret, leaked: everything.includes(form) }).toEqual({ secret, leaked: false });
    const report = JSON.parse(runs[1]!.stdout) as Reported;
    expect(setting(report, 'DATABASE_URL').value).toBe('postgres://tollbooth:[redacted]@127.0.0.1:5432/test');
    expect(setting(report, 'FACILITATOR_EVM_PRIVATE_KEY')).toMatchObject({
      value: '[redacted] (set)',
      source: { kind: 'env' },
    });
    expect(setting(report, 'MPP_SECRET_KEY').source).toMatchObject({ kind: 'file', path: mppFile });
  });

  it('--check lists every problem at once, each naming its variable, and exits 78', async () => {
    const { code, stdout } = await config(['--check'], {
      PORT: 'eighty',
      FACILITATOR_EVM_PRIVATE_KEY: '0x1234',
      RATE_LIMIT_TOOLS: '{not json',
      MCP_MAX_SESSIONS: '10',
      MCP_MAX_SESSIONS_PER_CLIENT: '20',
      BUDGET_MAX_USD_PER_DAY: '-5',
      PAYMENT_PROTOCOLS: 'bitcoin',
      METRICS_TOKEN_FILE: join(dir, 'missing-token-file'),
    });
    expect(code).toBe(78);
    const problems = stdout.split('\n').filter((line) => line.startsWith('  - '));
    for (const variable of [
      'PORT',
      'FACILITATOR_EVM_PRIVATE_KEY',
      'RATE_LIMIT_TOOLS',
      'MCP_MAX_SESSIONS_PER_CLIENT',
      'BUDGET_MAX_USD_PER_DAY',
      'PAYMENT_PROTOCOLS',
      'METRICS_TOKEN_FILE',
    ])
      expect(
        problems.filter((line) => line.includes(variable)),
        variable,
      ).toHaveLength(1);
    expect(stdout).toMatch(/^7 configuration problem\(s\)/);

    const json = await config(['--check', '--json'], { NODE_ENV: 'production', FACILITATOR_ULR: 'https://x.example' });
    expect(json.code).toBe(78);
    const report = JSON.parse(json.stdout) as Reported;
    expect(report.valid).toBe(false);
    expect(report.problems.map((p) => p.variable)).toEqual(
      expect.arrayContaining(['PAY_TO_EVM', 'MPP_SECRET_KEY', 'FACILITATOR_ULR']),
    );
  });

  it('--check of a valid configuration exits 0 without starting a server or opening the store', async () => {
    const dataDir = join(dir, 'never-created');
    const { code, stdout } = await config(['--check'], { DATA_DIR: dataDir, PORT: '4021', FACILITATOR_ULR: 'x' });
    expect(code).toBe(0);
    expect(stdout).toMatch(/^configuration is valid/);
    // Outside production a lookalike name is a warning, as tollbooth serve warns.
    expect(stdout).toContain('FACILITATOR_ULR (did you mean FACILITATOR_URL?)');
    expect(stdout).not.toContain('listening');
    expect(existsSync(dataDir)).toBe(false);
  });

  it('is listed by tollbooth help', async () => {
    const help = await new Promise<string>((resolve) =>
      execFile(process.execPath, [CLI_PATH, 'help'], (_err, stdout) => resolve(stdout)),
    );
    expect(help).toMatch(/tollbooth config +the effective configuration/);
  });
});
