import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { silentLogger } from '../../src/shared/log.js';
import { createProviders } from '../../src/providers/index.js';
import { SqliteStore } from '../../src/store/dialects/sqlite/store.js';
import { DRIPS_PER_DAY, testnetFund } from '../../tools/testnet-fund.js';
import { testContext } from '../support/context.js';
import { cdpTestKey, startCdpLookalike, type CdpLookalike } from '../support/upstreams/cdp-faucet.js';
import { toolFailure } from '../support/upstreams/open-data.js';

let cdp: CdpLookalike;
let store: SqliteStore;
let dir: string;
let ctx: ReturnType<typeof testContext>;
let n = 0;

beforeAll(async () => {
  const key = cdpTestKey('ec');
  cdp = await startCdpLookalike(key, { capPerAddress: 5 });
  dir = mkdtempSync(join(tmpdir(), 'testnet-fund-'));
  store = await SqliteStore.open(join(dir, 'tollbooth.db'));
  const config = loadConfig({
    LOG_LEVEL: 'silent',
    CDP_API_URL: cdp.url,
    CDP_API_KEY_ID: key.keyId,
    CDP_API_KEY_SECRET: key.secret,
    UPSTREAM_TIMEOUT_MS: '1000',
  });
  ctx = testContext({ providers: createProviders(config, silentLogger), store: store.toolState });
});
afterAll(async () => {
  await store?.close();
  await cdp?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A fresh EVM address per test, so the per-day counts of different tests never meet. */
const evm = () => `0x${(++n).toString(16).padStart(40, 'a')}`;
const fund = (body: Record<string, unknown>) =>
  Promise.resolve().then(() => testnetFund.handler(testnetFund.input.parse(body), ctx));

describe('testnet-fund', () => {
  it('drips 1 USDC on base-sepolia by default and answers funded with the hash and explorer link', async () => {
    const address = evm();
    const out = testnetFund.output.parse(await fund({ address }));
    const sent = cdp.drips.at(-1)!;
    expect(sent).toMatchObject({
      network: 'base-sepolia',
      token: 'usdc',
      address: expect.stringMatching(new RegExp(address.slice(2), 'i')),
    });
    expect(out).toEqual({
      funded: true,
      network: 'base-sepolia',
      token: 'usdc',
      transactionHash: sent.transaction,
      explorer: `https://sepolia.basescan.org/tx/${sent.transaction}`,
    });
  });

  it(`refuses a third drip for one address on the same day with 429, without asking the faucet`, async () => {
    const address = evm();
    for (let i = 0; i < DRIPS_PER_DAY; i++) await fund({ address, token: i ? 'eth' : 'usdc' });
    const before = cdp.requests;
    const err = await toolFailure(fund({ address }));
    expect(err).toMatchObject({ code: 'rate_limited', field: 'address' });
    expect(err.httpStatus).toBe(429);
    expect(err.message).toMatch(/2 drips today.*Try again after/);
    expect(cdp.requests).toBe(before);
  });

  it('counts an EVM address once however its letters are cased', async () => {
    const address = '0x' + 'ab'.repeat(20);
    await fund({ address });
    await fund({ address: address.toUpperCase().replace('0X', '0x') });
    expect((await toolFailure(fund({ address: '0xAbAbABababABababababABababababababababab' }))).code).toBe(
      'rate_limited',
    );
  });

  it('gives the drip back when the faucet fails, so a failed drip never uses up the day', async () => {
    const address = evm();
    cdp.failNext('500', 2);
    for (let i = 0; i < 2; i++) expect((await toolFailure(fund({ address }))).code).toBe('upstream_unavailable');
    await fund({ address });
    await fund({ address });
    expect((await toolFailure(fund({ address }))).code).toBe('rate_limited');
  });

  it('maps the hosted faucet’s own rolling cap to 429 rate_limited and gives the drip back', async () => {
    const address = evm();
    cdp.failNext('429');
    const err = await toolFailure(fund({ address }));
    expect(err).toMatchObject({ code: 'rate_limited' });
    expect(err.message).toMatch(/CDP faucet's own rolling 24-hour cap/);
    await fund({ address });
    await fund({ address });
    expect((await toolFailure(fund({ address }))).message).toMatch(/2 drips today/);
  });

  it('drips SOL on solana-devnet to a base58 address', async () => {
    const out = testnetFund.output.parse(
      await fund({ address: 'HpabPRRCFbBKSuJr5PdkVvQc85FyxyTWkFM2obBRSvHT', network: 'solana-devnet', token: 'sol' }),
    );
    expect(out).toMatchObject({ funded: true, network: 'solana-devnet', token: 'sol' });
    expect(out.explorer).toMatch(/cluster=devnet$/);
  });
});
