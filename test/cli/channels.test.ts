import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { computeChannelId } from '@x402/evm/batch-settlement/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runChannels } from '../../src/cli/channels.js';
import { usage } from '../../src/cli/main.js';
import { SqliteStore } from '../../src/store/dialects/sqlite/store.js';

const BASE_USDC = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913';
const PAYER = '0x00000000000000000000000000000000000000a1';
const dir = mkdtempSync(join(tmpdir(), 'tollbooth-channels-cli-'));
const config = {
  payer: PAYER,
  payerAuthorizer: PAYER,
  receiver: '0x00000000000000000000000000000000000000b2',
  receiverAuthorizer: '0x00000000000000000000000000000000000000c3',
  token: BASE_USDC,
  withdrawDelay: 900,
  salt: `0x${'00'.repeat(32)}`,
} as const;
const channelId = computeChannelId(config, 'eip155:8453');
const lastRequest = Date.now() - 2 * 3600_000;

afterAll(() => rmSync(dir, { recursive: true, force: true }));

beforeAll(async () => {
  const store = await SqliteStore.open(join(dir, 'tollbooth.db'));
  try {
    await store.channels.updateChannel(channelId, () => ({
      channelId,
      channelConfig: config,
      chargedCumulativeAmount: '25000',
      signedMaxClaimable: '26000',
      signature: '0x01',
      balance: '1000000',
      totalClaimed: '10000',
      withdrawRequestedAt: 0,
      refundNonce: 0,
      lastRequestTimestamp: lastRequest,
    }));
  } finally {
    await store.close();
  }
});

/** Runs the command; resolves to its exit code and what it wrote. */
async function channels(env: NodeJS.ProcessEnv, json: boolean) {
  let out = '';
  let err = '';
  const code = await runChannels(env, { json }, { out: (t) => (out += t), err: (t) => (err += t) });
  return { code, out, err };
}

describe('tollbooth channels', () => {
  it('is listed in the help', () => {
    expect(usage()).toContain('tollbooth channels');
  });

  it('lists each channel with payer, network, balance, charged, claimed and idle time as JSON', async () => {
    const { code, out } = await channels({ DATA_DIR: dir }, true);
    expect(code).toBe(0);
    const [row] = JSON.parse(out).channels;
    expect(row).toMatchObject({
      channelId: channelId.toLowerCase(),
      payer: PAYER,
      network: 'eip155:8453',
      balance: '1000000',
      charged: '25000',
      claimed: '10000',
      unclaimed: '15000',
      busy: false,
      units: { balance: '1', charged: '0.025', claimed: '0.01' },
    });
    expect(row.idleSeconds).toBeGreaterThanOrEqual(7200);
  });

  it('prints a table in decimal units with the idle time', async () => {
    const { code, out } = await channels({ DATA_DIR: dir }, false);
    expect(code).toBe(0);
    expect(out).toMatch(/CHANNEL\s+PAYER\s+NETWORK\s+BALANCE\s+CHARGED\s+CLAIMED\s+IDLE/);
    expect(out).toMatch(new RegExp(`${PAYER}\\s+eip155:8453\\s+1\\s+0\\.025\\s+0\\.01\\s+2h0m`));
    expect(out).toContain('1 channel(s)');
  });

  it('refuses a data directory without a store', async () => {
    const { code, err } = await channels({ DATA_DIR: join(dir, 'nowhere') }, false);
    expect(code).toBe(1);
    expect(err).toContain('No store at');
  });
});
