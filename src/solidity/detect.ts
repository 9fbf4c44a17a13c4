import { analyzeLowLevelCall, LOW_LEVEL_MEMBERS } from './calls.js';
import { buildContext, inComparison, type TokenContext } from './context.js';
import type { Hit, RuleId } from './rules.js';
import type { SolToken, TokenStream } from './tokens.js';

const EXACT_VERSION = /^=?\d+\.\d+\.\d+$/;
const EQUALITY = new Set(['==', '!=']);
/** `block.<member>` values that are only ever useful as (weak) randomness. */
const ALWAYS_RANDOM = new Set(['difficulty', 'prevrandao']);
/** `block.<member>` values that are weak randomness when hashed or reduced modulo. */
const RANDOM_WHEN_MIXED = new Set(['timestamp', 'number', 'coinbase']);

function text(tokens: SolToken[], i: number): string {
  return tokens[i]?.text ?? '';
}

/**
 * Whether `tokens[i..]` is a free-standing `obj.member` (not itself a member of something else).
 */
function isMember(tokens: SolToken[], i: number, obj: string): boolean {
  return text(tokens, i) === obj && text(tokens, i + 1) === '.' && text(tokens, i - 1) !== '.';
}

/**
 * Whether the word at `i` is a call to a global function of that name (not a member, not a
 * declaration).
 */
function isGlobalCall(tokens: SolToken[], i: number): boolean {
  const prev = text(tokens, i - 1);
  return text(tokens, i + 1) === '(' && prev !== '.' && prev !== 'function';
}

/** `tx.origin == msg.sender` (either order, == or !=): an EOA check, not authorization. */
function comparedWithMsgSender(tokens: SolToken[], i: number): boolean {
  const isMsgSender = (k: number): boolean =>
    text(tokens, k) === 'msg' && text(tokens, k + 1) === '.' && text(tokens, k + 2) === 'sender';
  const after = EQUALITY.has(text(tokens, i + 3)) && isMsgSender(i + 4);
  const tail = text(tokens, i + 7);
  const before = EQUALITY.has(text(tokens, i - 1)) && isMsgSender(i - 4) && text(tokens, i - 5) !== '.';
  return (after && tail !== '.' && tail !== '(' && tail !== '[') || before;
}

/**
 * Whether the value at `i` (spanning `width` tokens) is hashed or reduced modulo, i.e. used as
 * randomness.
 */
function mixedIntoRandomness(tokens: SolToken[], ctx: TokenContext, i: number, width: number): boolean {
  return ctx.hash[i] === 1 || text(tokens, i + width) === '%';
}

/** Whether the pragma at `i` (`pragma solidity ...;`) allows more than one compiler version. */
function isFloatingPragma(tokens: SolToken[], i: number): boolean {
  let constraint = '';
  for (let k = i + 2; k < tokens.length && text(tokens, k) !== ';'; k++) {
    constraint += text(tokens, k);
    if (constraint.length > 200) break;
  }
  return !EXACT_VERSION.test(constraint);
}

/** The `now` alias of block.timestamp used as a value (not declared, not a member, not called). */
function isNowValue(tokens: SolToken[], i: number): boolean {
  const prev = tokens[i - 1];
  if (text(tokens, i + 1) === '(' || prev?.text === '.') return false;
  if (prev === undefined || prev.text === 'return') return true;
  return prev.kind === 'punct' && prev.text !== ')' && prev.text !== ']';
}

/** `tx.origin` used to authorize (a guard or a comparison), unless it is only compared with `msg.sender`. */
function txOriginRules(tokens: SolToken[], ctx: TokenContext, i: number): RuleId[] {
  if (!isMember(tokens, i, 'tx') || text(tokens, i + 2) !== 'origin') return [];
  const authorizes = ctx.guard[i] === 1 || inComparison(ctx, i);
  return authorizes && !comparedWithMsgSender(tokens, i) ? ['tx-origin'] : [];
}

/** `block.timestamp` in a guard or comparison, and `block.<member>` used as randomness. */
function blockMemberRules(tokens: SolToken[], ctx: TokenContext, i: number): RuleId[] {
  if (!isMember(tokens, i, 'block')) return [];
  const rules: RuleId[] = [];
  const member = text(tokens, i + 2);
  if (member === 'timestamp' && (ctx.guard[i] === 1 || inComparison(ctx, i))) {
    rules.push('timestamp-dependence');
  }
  if (ALWAYS_RANDOM.has(member) || (member === 'blockhash' && text(tokens, i + 3) === '(')) {
    rules.push('weak-randomness');
  } else if (RANDOM_WHEN_MIXED.has(member) && mixedIntoRandomness(tokens, ctx, i, 3)) {
    rules.push('weak-randomness');
  }
  return rules;
}

/** The `now` alias of block.timestamp in a guard or comparison, or used as randomness. */
function nowRules(tokens: SolToken[], ctx: TokenContext, i: number): RuleId[] {
  if (!isNowValue(tokens, i)) return [];
  const rules: RuleId[] = [];
  if (ctx.guard[i] === 1 || inComparison(ctx, i)) rules.push('timestamp-dependence');
  if (mixedIntoRandomness(tokens, ctx, i, 1)) rules.push('weak-randomness');
  return rules;
}

/** A Yul `delegatecall`/`call`/`staticcall` inside inline assembly, and a success flag discarded with `pop(...)`. */
function yulCallRules(tokens: SolToken[], ctx: TokenContext, i: number, word: string): RuleId[] {
  if (ctx.asm[i] !== 1 || !isGlobalCall(tokens, i)) return [];
  const rules: RuleId[] = [];
  if (word === 'delegatecall') rules.push('delegatecall');
  // In Yul a call's success flag is only discarded explicitly: pop(call(...)).
  if (text(tokens, i - 1) === '(' && text(tokens, i - 2) === 'pop') rules.push('unchecked-call');
  return rules;
}

/** The rules the word at `i` triggers (low-level member calls excepted), in the order they are reported. */
function wordRules(tokens: SolToken[], ctx: TokenContext, i: number, word: string): RuleId[] {
  switch (word) {
    case 'tx':
      return txOriginRules(tokens, ctx, i);
    case 'block':
      return blockMemberRules(tokens, ctx, i);
    case 'now':
      return nowRules(tokens, ctx, i);
    case 'blockhash':
      return isGlobalCall(tokens, i) ? ['weak-randomness'] : [];
    case 'prevrandao':
    case 'difficulty':
      return ctx.asm[i] === 1 && isGlobalCall(tokens, i) ? ['weak-randomness'] : [];
    case 'delegatecall':
    case 'call':
    case 'staticcall':
      return yulCallRules(tokens, ctx, i, word);
    case 'selfdestruct':
    case 'suicide':
      return isGlobalCall(tokens, i) ? ['selfdestruct'] : [];
    case 'ecrecover':
      return isGlobalCall(tokens, i) ? ['ecrecover'] : [];
    case 'assembly': {
      const next = tokens[i + 1];
      const opensBody = next?.text === '{' || next?.text === '(' || next?.kind === 'string';
      return opensBody ? ['inline-assembly'] : [];
    }
    case 'pragma':
      return text(tokens, i + 1) === 'solidity' && isFloatingPragma(tokens, i) ? ['floating-pragma'] : [];
    default:
      return [];
  }
}

/** Runs the eleven token-level rules (everything except missing-spdx) over a lexed source. */
export function detectInTokens(stream: TokenStream): Hit[] {
  const { tokens } = stream;
  const ctx = buildContext(stream);
  const hits: Hit[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i] as SolToken;
    if (token.kind !== 'word') continue;
    const word = token.text;
    if (text(tokens, i - 1) === '.' && LOW_LEVEL_MEMBERS.has(word)) {
      if (word === 'delegatecall') hits.push({ line: token.line, rule: 'delegatecall' });
      hits.push(...analyzeLowLevelCall(stream, i));
      continue;
    }
    for (const rule of wordRules(tokens, ctx, i, word)) hits.push({ line: token.line, rule });
  }
  return hits;
}
