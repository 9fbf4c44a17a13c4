import { describe, expect, it } from 'vitest';
import type { Assessment } from '../../src/token-report/risk.js';
import { usd, verdictOf } from '../../src/token-report/verdict.js';

function assessment(overrides: Partial<Assessment> = {}): Assessment {
  return {
    name: 'Example',
    symbol: 'EXM',
    verified: true,
    isHoneypot: false,
    ownershipRenounced: true,
    flags: [],
    score: 0,
    level: 'low',
    liquidityUsd: 227000.62,
    pairCount: 3,
    ageDays: 400,
    top10Pct: 39.5,
    owners: [],
    creators: [],
    holders: [],
    ...overrides,
  };
}

/** Sentences as a reader splits them: a period followed by a space or the end. */
const sentences = (text: string) => text.split(/(?<=\.)\s+/);

describe('the analyst verdict', () => {
  it('is three sentences: risk and advice, contract findings, market and holders', () => {
    const text = verdictOf(assessment(), 'Base');
    expect(sentences(text)).toEqual([
      'Example (EXM) on Base scores 0/100, a low risk with no serious warning signs.',
      'No contract red flags were found, the code is verified and ownership is renounced.',
      'It has $227,001 of liquidity across 3 DEX pairs and 400 days of trading, and the 10 largest holders own 39.5% of the supply.',
    ]);
  });

  it('is generated deterministically from the data', () => {
    const a = assessment({ flags: ['mintable', 'proxy'], score: 25, level: 'medium', ownershipRenounced: false });
    expect(verdictOf(a, 'Ethereum')).toBe(verdictOf({ ...a }, 'Ethereum'));
  });

  it('names the three heaviest contract flags and how many more there are, leaving market flags to the last sentence', () => {
    const text = verdictOf(
      assessment({
        flags: ['hidden_owner', 'not_open_source', 'mintable', 'low_liquidity', 'proxy', 'blacklist'],
        score: 95,
        level: 'critical',
      }),
      'Base',
    );
    const [first, second] = sentences(text);
    expect(first).toBe('Example (EXM) on Base scores 95/100, a critical risk, so avoid it.');
    expect(second).toBe(
      'The main contract concerns are that it has a hidden owner, the source code is not verified and new tokens can be minted, plus 2 more flags.',
    );
    expect(sentences(text)).toHaveLength(3);
  });

  it('warns of a honeypot in plain words', () => {
    const text = verdictOf(
      assessment({ isHoneypot: true, flags: ['honeypot'], score: 100, level: 'critical' }),
      'Base',
    );
    expect(sentences(text)[1]).toBe('It looks like a honeypot: holders cannot sell or move it, so do not buy it.');
  });

  it('says when there is no DEX pair or no holder list, and when an owner remains', () => {
    const text = verdictOf(
      assessment({
        pairCount: 0,
        liquidityUsd: 0,
        ageDays: null,
        top10Pct: null,
        ownershipRenounced: false,
        verified: false,
        flags: ['no_dex_pairs'],
        score: 20,
        level: 'medium',
      }),
      'Base',
    );
    expect(sentences(text).slice(1)).toEqual([
      'No contract red flags were found, the code is not verified and an owner can still change the contract.',
      'It has no indexed DEX pair, so there is no liquidity to sell into and its age is unknown, and holder data is not available.',
    ]);
  });

  it('keeps upstream names from breaking the three sentences', () => {
    const text = verdictOf(assessment({ name: 'Evil. Token!\nSecond line? yes', symbol: 'E.V' }), 'Base');
    expect(sentences(text)).toHaveLength(3);
    expect(text.startsWith('Evil Token Second line yes (E V) on Base')).toBe(true);
    expect(verdictOf(assessment({ name: '', symbol: '' }), 'Solana').startsWith('This token on Solana scores')).toBe(
      true,
    );
    expect(verdictOf(assessment({ name: 'BONK', symbol: 'BONK' }), 'Solana').startsWith('BONK on Solana scores')).toBe(
      true,
    );
  });

  it('words young pairs and single pairs', () => {
    expect(verdictOf(assessment({ pairCount: 1, ageDays: 0.4 }), 'Base')).toContain(
      'across 1 DEX pair and less than a day of trading',
    );
    expect(verdictOf(assessment({ ageDays: 1.9 }), 'Base')).toContain('1 day of trading');
  });

  it('formats dollars with thousands separators', () => {
    expect([usd(0), usd(999.5), usd(1234567.4)]).toEqual(['$0', '$1,000', '$1,234,567']);
  });
});
