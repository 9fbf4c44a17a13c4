import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/config.js';
import {
  covers,
  familyOptions,
  optionLabel,
  type SupportedKinds,
} from '../../../src/payments/facilitators/facilitator-support.js';
import {
  acceptsFor,
  advertisedOptions,
  UNASKED,
  type ChallengeBook,
  type PaymentOption,
} from '../../../src/payments/challenges/requirements.js';
import { paidTools as tools } from '../../../tools/index.js';

const option = (x402Version: 1 | 2, scheme: string, network: string): PaymentOption => ({
  key: `${network}|${scheme}`,
  x402Version,
  scheme,
  network,
  networkId: network,
});

describe('a /supported kind covers an advertised option', () => {
  it('when version, scheme and network are the same', () => {
    const kinds: SupportedKinds = [{ x402Version: 2, scheme: 'exact', network: 'eip155:8453' }];
    expect(covers(kinds, option(2, 'exact', 'eip155:8453'))).toBe(true);
    expect(covers(kinds, option(2, 'upto', 'eip155:8453'))).toBe(false);
    expect(covers(kinds, option(1, 'exact', 'eip155:8453'))).toBe(false);
    expect(covers(kinds, option(2, 'exact', 'eip155:137'))).toBe(false);
  });

  it('when its network is a namespace wildcard of the option', () => {
    const kinds: SupportedKinds = [{ x402Version: 2, scheme: 'exact', network: 'eip155:*' }];
    expect(covers(kinds, option(2, 'exact', 'eip155:42161'))).toBe(true);
    expect(covers(kinds, option(2, 'exact', 'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp'))).toBe(false);
  });
});

describe('the advertised options', () => {
  it('are every option of the embedded table: the tools group, the fixed Base and Solana options, and version 1 on base', () => {
    const labels = advertisedOptions(loadConfig({})).map(optionLabel);
    expect(labels).toHaveLength(14);
    expect(labels).toEqual(
      expect.arrayContaining([
        'exact on eip155:8453',
        'upto on eip155:8453',
        'exact on stellar:pubnet',
        'exact on base (x402 v1)',
      ]),
    );
  });

  it('belong to the family of their network', () => {
    const config = loadConfig({});
    expect(familyOptions(config, 'svm').map(optionLabel)).toEqual(['exact on solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp']);
    expect(familyOptions(config, 'evm').map(optionLabel)).toContain('exact on base (x402 v1)');
  });

  it('leave withheld options out of every challenge, the short-named smm entry and version 1 included', () => {
    const config = loadConfig({});
    const byName = (name: string) => tools.find((t) => t.name === name)!;
    const book: ChallengeBook = { withheld: new Set(['eip155:8453|exact', 'base|exact']), feePayers: new Map() };
    expect(acceptsFor(config, byName('smm-order'), book)).toEqual([]);
    expect(acceptsFor(config, byName('transfers-evm'), book)).toEqual([]);
    expect(acceptsFor(config, byName('token-report'), book).map((a) => a.network)).toEqual([
      'solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp',
    ]);
    const annuity = acceptsFor(config, byName('annuity'), book).map((a) => `${a.scheme} ${a.network}`);
    expect(annuity).toContain('upto eip155:8453');
    expect(annuity).not.toContain('exact eip155:8453');
    // The same configuration under a book that withholds nothing (its facilitators not asked) is not affected.
    expect(acceptsFor(config, byName('smm-order'), UNASKED)).toHaveLength(1);
  });
});
