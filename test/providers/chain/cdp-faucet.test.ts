import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/shared/log.js';
import { cdpJwt, parseCdpSecret } from '../../../src/providers/chain/cdp-auth.js';
import { createCdpFaucet, interpretCdpFaucetAnswer } from '../../../src/providers/chain/cdp-faucet.js';
import { Upstream } from '../../../src/providers/upstream.js';
import {
  cdpTestKey,
  startCdpLookalike,
  type CdpLookalike,
  type CdpTestKey,
} from '../../support/upstreams/cdp-faucet.js';
import { toolFailure } from '../../support/upstreams/open-data.js';

const EVM = '0x742d35Cc6634C0532925a3b844Bc454e4438f44e';
const SOL = 'HpabPRRCFbBKSuJr5PdkVvQc85FyxyTWkFM2obBRSvHT';
const signal = new AbortController().signal;

let key: CdpTestKey;
let cdp: CdpLookalike;
beforeAll(async () => {
  key = cdpTestKey('ec');
  cdp = await startCdpLookalike(key, {
    capPerAddress: 3,
    refused: ['0x000000000000000000000000000000000000dEaD'],
    slowMs: 500,
  });
});
afterAll(async () => {
  await cdp?.stop();
});

function faucet(k: CdpTestKey = key, timeoutMs = 2_000) {
  return faucetAt(cdp.url, k, timeoutMs);
}

function faucetAt(baseUrl: string, k: CdpTestKey = key, timeoutMs = 2_000) {
  const upstream = new Upstream(
    {
      name: 'cdp-faucet',
      label: 'CDP faucet',
      baseUrl,
      timeoutMs,
      retries: 0,
      cacheTtlMs: 0,
      cacheMaxEntries: 0,
      backoffMs: 1,
    },
    silentLogger,
  );
  return createCdpFaucet(upstream, { keyId: k.keyId, key: parseCdpSecret(k.secret) }, silentLogger);
}

describe('the hosted CDP faucet provider', () => {
  it('drips on Base Sepolia with an ES256 JWT and returns the hash and the explorer link', async () => {
    const drip = await faucet().drip({ network: 'base-sepolia', token: 'usdc', address: EVM }, signal);
    const sent = cdp.drips.at(-1)!;
    expect(sent).toMatchObject({ chain: 'evm', network: 'base-sepolia', address: EVM, token: 'usdc' });
    expect(drip).toEqual({
      transactionHash: sent.transaction,
      explorer: `https://sepolia.basescan.org/tx/${sent.transaction}`,
    });
  });

  it('drips SOL on Solana devnet with an EdDSA (Ed25519) key and returns the signature', async () => {
    const ed = cdpTestKey('ed25519');
    const edCdp = await startCdpLookalike(ed);
    try {
      const upstream = new Upstream(
        {
          name: 'cdp-faucet',
          label: 'CDP faucet',
          baseUrl: edCdp.url,
          timeoutMs: 2_000,
          retries: 0,
          cacheTtlMs: 0,
          cacheMaxEntries: 0,
        },
        silentLogger,
      );
      const drip = await createCdpFaucet(
        upstream,
        { keyId: ed.keyId, key: parseCdpSecret(ed.secret) },
        silentLogger,
      ).drip({ network: 'solana-devnet', token: 'sol', address: SOL }, signal);
      expect(edCdp.drips).toEqual([
        { chain: 'solana', network: 'solana-devnet', address: SOL, token: 'sol', transaction: drip.transactionHash },
      ]);
      expect(drip.explorer).toBe(`https://explorer.solana.com/tx/${drip.transactionHash}?cluster=devnet`);
      expect(edCdp.unauthorized).toBe(0);
    } finally {
      await edCdp.stop();
    }
  });

  it('maps the faucet rolling cap (429 faucet_limit_exceeded) to 429 rate_limited, asking once only', async () => {
    const address = '0x1111111111111111111111111111111111111111';
    for (let i = 0; i < 3; i++) await faucet().drip({ network: 'base-sepolia', token: 'eth', address }, signal);
    const before = cdp.requests;
    const err = await toolFailure(faucet().drip({ network: 'base-sepolia', token: 'eth', address }, signal));
    expect(err.code).toBe('rate_limited');
    expect(err.httpStatus).toBe(429);
    expect(err.message).toMatch(/rolling 24-hour cap/);
    expect(cdp.requests).toBe(before + 1);
  });

  it('maps an ordinary 429 rate_limit_exceeded to a retry-later upstream_rate_limited with its Retry-After, not the cap', async () => {
    const busy = await startCdpLookalike(key, {
      retryAfterSeconds: 7,
      rateLimitBody: { errorType: 'rate_limit_exceeded', errorMessage: 'Rate limit exceeded' },
    });
    try {
      busy.failNext('429');
      const err = await toolFailure(
        faucetAt(busy.url).drip({ network: 'base-sepolia', token: 'eth', address: EVM }, signal),
      );
      expect(err).toMatchObject({ code: 'upstream_rate_limited', details: { retryAfterSeconds: 7 } });
      expect(err.message).toMatch(/in 7 s/);
      expect(err.message).not.toMatch(/24-hour|tomorrow/);
      expect(busy.requests).toBe(1);
    } finally {
      await busy.stop();
    }
  });

  it('signs a bearer JWT with iat, nbf and exp, as Coinbase’s SDK does', () => {
    const now = 1_760_000_000;
    const jwt = cdpJwt(
      { keyId: key.keyId, key: parseCdpSecret(key.secret) },
      'POST',
      'https://api.cdp.coinbase.com/platform/v2/evm/faucet',
      now,
    );
    const claims = JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
    expect(claims).toMatchObject({ iss: 'cdp', sub: key.keyId, iat: now, nbf: now, exp: now + 120 });
  });

  it('answers an address the faucet refuses (403) with 400 on the address field', async () => {
    const err = await toolFailure(
      faucet().drip(
        { network: 'base-sepolia', token: 'usdc', address: '0x000000000000000000000000000000000000dEaD' },
        signal,
      ),
    );
    expect(err.code).toBe('invalid_input');
    expect(err.field).toBe('address');
    expect(err.message).toMatch(/forbidden/);
  });

  it('reports a refused API key as the operator’s problem, not the caller’s', async () => {
    const other = cdpTestKey('ec');
    const err = await toolFailure(
      faucet({ ...other, keyId: key.keyId }).drip({ network: 'base-sepolia', token: 'usdc', address: EVM }, signal),
    );
    expect(err.code).toBe('upstream_unavailable');
    expect(err.message).toMatch(/credentials/);
    expect(cdp.unauthorized).toBeGreaterThan(0);
  });

  it('never retries a drip: a 500 or a timeout is one request and an error', async () => {
    for (const mode of ['500', 'slow'] as const) {
      const before = cdp.requests;
      cdp.failNext(mode);
      const err = await toolFailure(
        faucet(key, 200).drip({ network: 'base-sepolia', token: 'usdc', address: EVM }, signal),
      );
      expect(err.code).toBe(mode === '500' ? 'upstream_unavailable' : 'upstream_timeout');
      expect(cdp.requests).toBe(before + 1);
    }
  });

  it('sends two identical concurrent drips as two requests (never joined into one answer)', async () => {
    const address = '0x2222222222222222222222222222222222222222';
    const one = faucet();
    const [a, b] = await Promise.all(
      [1, 2].map(() => one.drip({ network: 'base-sepolia', token: 'usdc', address }, signal)),
    );
    expect(a!.transactionHash).not.toBe(b!.transactionHash);
    expect(cdp.drips.filter((d) => d.address === address)).toHaveLength(2);
  });

  it('reads a cap reported in an error body without HTTP 429 as the faucet’s cap too', () => {
    const err = interpretCdpFaucetAnswer(
      403,
      { errorType: 'faucet_limit_exceeded', errorMessage: 'limit reached' },
      silentLogger,
    );
    expect(err?.code).toBe('rate_limited');
    expect(interpretCdpFaucetAnswer(200, { transactionHash: '0x' }, silentLogger)).toBeUndefined();
  });

  it('refuses an answer without a transaction hash as invalid data', async () => {
    cdp.failNext('malformed');
    const err = await toolFailure(faucet().drip({ network: 'base-sepolia', token: 'usdc', address: EVM }, signal));
    expect(err.code).toBe('upstream_invalid');
  });
});
