import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGoPlusProvider } from '../../../src/providers/market/goplus.js';
import { tokenChain, type TokenChain } from '../../../src/token-report/chains.js';
import { startGoPlusLookalike, TOKENS, type GoPlusLookalike } from '../../support/upstreams/goplus.js';
import { toolFailure, upstreamFor } from '../../support/upstreams/open-data.js';

let lookalike: GoPlusLookalike;
beforeAll(async () => {
  lookalike = await startGoPlusLookalike({ slowMs: 400 });
});
afterAll(async () => {
  await lookalike?.stop();
});

const fresh = () => createGoPlusProvider(upstreamFor('goplus', lookalike.url, { timeoutMs: 250 }));
const base = tokenChain('base');
const q = (chain: TokenChain, address: string) => ({ chain, address, field: 'token' });

describe('the GoPlus provider', () => {
  it('reads an EVM record keyed by the lower-cased address, turning "0"/"1" flags and fractions into booleans and numbers', async () => {
    const provider = fresh();
    expect(provider.source).toBe('GoPlus token security API');
    const { data } = await provider.tokenSecurity(q(base, TOKENS.clean));
    if (data.family !== 'evm') throw new Error('expected an EVM record');
    expect(data).toMatchObject({
      token_name: 'Example',
      token_symbol: 'EXM',
      is_open_source: true,
      is_honeypot: false,
      sell_tax: 0.03,
      buy_tax: 0,
      holder_count: 5321,
    });
    expect(data.holders).toHaveLength(12);
    expect(data.holders[1]).toMatchObject({ percent: 0.12, is_contract: false, is_locked: false });
    expect(data.lp_holders[0]).toMatchObject({ percent: 0.99, is_locked: true, tag: 'Burn' });
  });

  it('leaves fields GoPlus omits as unknown rather than false', async () => {
    const { data } = await fresh().tokenSecurity(q(base, TOKENS.untraded));
    if (data.family !== 'evm') throw new Error('expected an EVM record');
    expect(data.is_honeypot).toBeUndefined();
    expect(data.sell_tax).toBeUndefined();
    expect(data.owner_address).toBe('');
    expect(data.holders).toEqual([]);
  });

  it('reads the nested Solana shape keyed by the mint exactly as sent, accepting the SDK spelling none_transferable', async () => {
    const provider = fresh();
    const { data } = await provider.tokenSecurity(q(tokenChain('solana'), TOKENS.solRisky));
    if (data.family !== 'solana') throw new Error('expected a Solana record');
    expect(data.metadata).toMatchObject({ name: 'Freeze Cat', symbol: 'FCAT' });
    expect(data.mintable.status).toBe(true);
    expect(data.freezable.authority[0]).toMatchObject({
      address: '4CDLhLaqEKVZkCJPt2H312oZcDZXGV7juiUjYbvySZLm',
      malicious_address: false,
    });
    expect(data.none_transferable).toBe(false);
    expect(data.transfer_fee?.current_fee_rate).toBeTruthy();
    const wrongCase = await toolFailure(provider.tokenSecurity(q(tokenChain('solana'), TOKENS.solRisky.toLowerCase())));
    expect(wrongCase.code).toBe('not_found');
  });

  it('answers an unknown token (result {}) with not_found naming the field that named it', async () => {
    const err = await toolFailure(fresh().tokenSecurity({ chain: base, address: TOKENS.unknown, field: 'contract' }));
    expect(err).toMatchObject({ code: 'not_found', field: 'contract' });
    expect(err.message).toContain(TOKENS.unknown);
    expect(err.message).toMatch(/Check the address and chain\.$/);
  });

  it('answers a wallet address (code 2020 with HTTP 200) with not_found, and an unsupported chain (2018) with invalid_input on chain', async () => {
    expect(await toolFailure(fresh().tokenSecurity(q(base, TOKENS.wallet)))).toMatchObject({
      code: 'not_found',
      field: 'token',
    });
    const nowhere: TokenChain = { ...base, name: 'nowhere', label: 'Nowhere', goplusId: '999999' };
    expect(await toolFailure(fresh().tokenSecurity(q(nowhere, TOKENS.clean)))).toMatchObject({
      code: 'invalid_input',
      field: 'chain',
    });
  });

  it('answers the 4029 throttle (HTTP 200) with upstream_rate_limited and when to come back', async () => {
    lookalike.errorCode = 4029;
    lookalike.failNext('error200');
    const err = await toolFailure(fresh().tokenSecurity(q(base, TOKENS.clean)));
    expect(err.code).toBe('upstream_rate_limited');
    expect(err.details).toEqual({ retryAfterSeconds: 10 });
  });

  it('retries a server error sent with HTTP 200 (code 5000) and succeeds, or reports it as unavailable when it persists', async () => {
    lookalike.errorCode = 5000;
    lookalike.failNext('error200');
    const before = lookalike.requests;
    const { data } = await fresh().tokenSecurity(q(base, TOKENS.clean));
    expect(data.family).toBe('evm');
    expect(lookalike.requests - before).toBe(2);
    lookalike.failNext('error200', 2);
    expect((await toolFailure(fresh().tokenSecurity(q(base, TOKENS.clean)))).code).toBe('upstream_unavailable');
    lookalike.errorCode = 4029;
  });

  it('refuses a record of the wrong shape as invalid upstream data, and maps timeouts and 5xx', async () => {
    lookalike.failNext('mismatch');
    expect((await toolFailure(fresh().tokenSecurity(q(base, TOKENS.clean)))).code).toBe('upstream_invalid');
    lookalike.failNext('slow', 2);
    expect((await toolFailure(fresh().tokenSecurity(q(base, TOKENS.clean)))).code).toBe('upstream_timeout');
    lookalike.failNext('500', 2);
    expect((await toolFailure(fresh().tokenSecurity(q(base, TOKENS.clean)))).code).toBe('upstream_unavailable');
  });

  it('caches a record, so a second lookup does not reach GoPlus', async () => {
    const provider = fresh();
    await provider.tokenSecurity(q(base, TOKENS.honeypot));
    const before = lookalike.requests;
    const again = await provider.tokenSecurity(q(base, TOKENS.honeypot));
    expect(again.cached).toBe(true);
    expect(lookalike.requests).toBe(before);
  });
});
