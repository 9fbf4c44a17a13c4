import { RISK_FLAGS, type Assessment, type RiskFlag } from './risk.js';

/**
 * The three-sentence analyst verdict, generated only from the assessment (same data → same words):
 * 1. who and how risky: name, symbol, chain, score and level, with the advice of that level;
 * 2. the contract: a honeypot warning, else the three heaviest contract flags, else that none was found;
 * 3. the market: liquidity, pair count and age, and holder concentration (or that no DEX pair exists).
 */

const ADVICE = {
  low: 'a low risk with no serious warning signs',
  medium: 'a medium risk, so read the flags before buying',
  high: 'a high risk, so only buy what you can afford to lose',
  critical: 'a critical risk, so avoid it',
} as const;

/** Flags about the market rather than the contract; sentence 3 covers them. */
const MARKET_FLAGS: ReadonlySet<RiskFlag> = new Set([
  'no_dex_pairs',
  'low_liquidity',
  'new_token',
  'high_holder_concentration',
]);

/** Keeps upstream text from breaking the sentence structure: one line, no sentence-ending marks, at most 48 characters. */
function clean(text: string): string {
  return text
    .replace(/[\s.!?]+/g, ' ')
    .trim()
    .slice(0, 48)
    .trim();
}

/** Whole US dollars with thousands separators, e.g. `$185,000`. */
export function usd(amount: number): string {
  return `$${Math.round(amount)
    .toString()
    .replace(/\B(?=(\d{3})+(?!\d))/g, ',')}`;
}

function list(items: readonly string[]): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

function pct(n: number): string {
  return `${Number.isInteger(n) ? n : n.toFixed(1)}%`;
}

function identity(a: Assessment, chainLabel: string): string {
  const name = clean(a.name);
  const symbol = clean(a.symbol);
  if (name && symbol && name !== symbol) return `${name} (${symbol}) on ${chainLabel}`;
  if (name || symbol) return `${name || symbol} on ${chainLabel}`;
  return `This token on ${chainLabel}`;
}

function contractSentence(a: Assessment): string {
  if (a.isHoneypot) return 'It looks like a honeypot: holders cannot sell or move it, so do not buy it';
  const contract = a.flags.filter((f) => !MARKET_FLAGS.has(f));
  if (contract.length > 0) {
    const shown = contract.slice(0, 3).map((f) => RISK_FLAGS[f].words);
    const more =
      contract.length > 3 ? `, plus ${contract.length - 3} more flag${contract.length - 3 === 1 ? '' : 's'}` : '';
    return `The main contract concerns are that ${list(shown)}${more}`;
  }
  const owner = a.ownershipRenounced ? 'ownership is renounced' : 'an owner can still change the contract';
  return `No contract red flags were found, the code is ${a.verified ? 'verified' : 'not verified'} and ${owner}`;
}

function marketSentence(a: Assessment): string {
  const holders =
    a.top10Pct === null
      ? 'holder data is not available'
      : `the 10 largest holders own ${pct(a.top10Pct)} of the supply`;
  if (a.pairCount === 0)
    return `It has no indexed DEX pair, so there is no liquidity to sell into and its age is unknown, and ${holders}`;
  const pairs = `${a.pairCount} DEX pair${a.pairCount === 1 ? '' : 's'}`;
  const age =
    a.ageDays === null
      ? 'an unknown age'
      : a.ageDays < 1
        ? 'less than a day of trading'
        : `${Math.floor(a.ageDays)} day${Math.floor(a.ageDays) === 1 ? '' : 's'} of trading`;
  return `It has ${usd(a.liquidityUsd)} of liquidity across ${pairs} and ${age}, and ${holders}`;
}

/** The verdict: exactly three sentences, each ending with a period. */
export function verdictOf(a: Assessment, chainLabel: string): string {
  const first = `${identity(a, chainLabel)} scores ${a.score}/100, ${ADVICE[a.level]}`;
  return [first, contractSentence(a), marketSentence(a)].map((s) => `${s}.`).join(' ');
}
