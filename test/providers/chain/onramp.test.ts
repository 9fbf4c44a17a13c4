import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/shared/log.js';
import { parseCdpSecret } from '../../../src/providers/chain/cdp-auth.js';
import { createOnrampProvider } from '../../../src/providers/chain/onramp.js';
import { Upstream } from '../../../src/providers/upstream.js';
import {
  cdpTestKey,
  startCdpLookalike,
  type CdpLookalike,
  type CdpTestKey,
} from '../../support/upstreams/cdp-faucet.js';
import { toolFailure } from '../../support/upstreams/open-data.js';

const EVM = '0x742d35Cc6634C0532925a3b844Bc454e4438f44e';
const signal = new AbortController().signal;

let key: CdpTestKey;
let cdp: CdpLookalike;
beforeAll(async () => {
  key = cdpTestKey('ed25519');
  cdp = await startCdpLookalike(key);
});
afterAll(async () => {
  await cdp?.stop();
});

const upstream = () =>
  new Upstream(
    {
      name: 'cdp-onramp',
      label: 'Coinbase Onramp API',
      baseUrl: cdp.url,
      timeoutMs: 2_000,
      retries: 1,
      cacheTtlMs: 0,
      cacheMaxEntries: 0,
      backoffMs: 1,
    },
    silentLogger,
  );

describe('the onramp provider', () => {
  it('mints a session with a CDP JWT and returns its single-use link for USDC on Base', async () => {
    const onramp = createOnrampProvider(upstream(), { keyId: key.keyId, key: parseCdpSecret(key.secret) });
    expect(onramp.configured).toBe(true);
    const link = await onramp.link(EVM, signal);
    expect(cdp.sessions.at(-1)).toEqual({ destinationAddress: EVM, url: link.url });
    expect(link).toMatchObject({ provider: 'Coinbase Onramp', network: 'base', asset: 'USDC', expiresInSeconds: 300 });
    expect(link.url).toMatch(/^https:\/\/pay\.coinbase\.com\/buy\?sessionToken=/);
  });

  it('gives each caller its own session, even for the same wallet at the same moment', async () => {
    const onramp = createOnrampProvider(upstream(), { keyId: key.keyId, key: parseCdpSecret(key.secret) });
    const [a, b] = await Promise.all([onramp.link(EVM, signal), onramp.link(EVM, signal)]);
    expect(a.url).not.toBe(b.url);
  });

  it('says why there is no link when no CDP API key is configured, without calling anyone', async () => {
    const before = cdp.requests;
    const onramp = createOnrampProvider(upstream(), undefined);
    expect(onramp.configured).toBe(false);
    const err = await toolFailure(onramp.link(EVM, signal));
    expect(err.message).toMatch(/session token.*CDP_API_KEY_ID/);
    expect(cdp.requests).toBe(before);
  });

  it('reports a session the API refuses as an upstream error', async () => {
    const onramp = createOnrampProvider(upstream(), {
      keyId: key.keyId,
      key: parseCdpSecret(cdpTestKey('ed25519').secret),
    });
    const err = await toolFailure(onramp.link(EVM, signal));
    expect(err.code).toBe('upstream_unavailable');
    expect(err.message).toMatch(/unauthorized/);
  });
});
