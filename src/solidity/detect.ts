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

/** Runs the eleven token-level rules (everything except missing-spdx) over a lexed source. */
export function detectInTokens(stream: TokenStream): Hit[] {
  const { tokens } = stream;
  const ctx = buildContext(stream);
  const hits: Hit[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i] as SolToken;
    if (token.kind !== 'word') continue;
    const add = (rule: RuleId): void => {
      hits.push({ line: token.line, rule });
    };
    const word = token.text;
    const prev = text(tokens, i - 1);
    if (prev === '.' && LOW_LEVEL_MEMBERS.has(word)) {
      if (word === 'delegatecall') add('delegatecall');
      hits.push(...analyzeLowLevelCall(stream, i));
      continue;
    }
    switch (word) {
      case 'tx':
        if (isMember(tokens, i, 'tx') && text(tokens, i + 2) === 'origin') {
          const authorizes = ctx.guard[i] === 1 || inComparison(ctx, i);
          if (authorizes && !comparedWithMsgSender(tokens, i)) add('tx-origin');
        }
        break;
      case 'block': {
        if (!isMember(tokens, i, 'block')) break;
        const member = text(tokens, i + 2);
        if (member === 'timestamp' && (ctx.guard[i] === 1 || inComparison(ctx, i))) {
          add('timestamp-dependence');
        }
        if (ALWAYS_RANDOM.has(member) || (member === 'blockhash' && text(tokens, i + 3) === '(')) {
          add('weak-randomness');
        } else if (RANDOM_WHEN_MIXED.has(member) && mixedIntoRandomness(tokens, ctx, i, 3)) {
          add('weak-randomness');
        }
        break;
      }
      case 'now':
        if (!isNowValue(tokens, i)) break;
        if (ctx.guard[i] === 1 || inComparison(ctx, i)) add('timestamp-dependence');
        if (mixedIntoRandomness(tokens, ctx, i, 1)) add('weak-randomness');
        break;
      case 'blockhash':
        if (isGlobalCall(tokens, i)) add('weak-randomness');
        break;
      case 'prevrandao':
      case 'difficulty':
        if (ctx.asm[i] === 1 && isGlobalCall(tokens, i)) add('weak-randomness');
        break;
      case 'delegatecall':
      case 'call':
      case 'staticcall':
        if (ctx.asm[i] !== 1 || !isGlobalCall(tokens, i)) break;
        if (word === 'delegatecall') add('delegatecall');
        // In Yul a call's success flag is only discarded explicitly: pop(call(...)).
        if (prev === '(' && text(tokens, i - 2) === 'pop') add('unchecked-call');
        break;
      case 'selfdestruct':
      case 'suicide':
        if (isGlobalCall(tokens, i)) add('selfdestruct');
        break;
      case 'ecrecover':
        if (isGlobalCall(tokens, i)) add('ecrecover');
        break;
      case 'assembly': {
        const next = tokens[i + 1];
        const opensBody = next?.text === '{' || next?.text === '(' || next?.kind === 'string';
        if (opensBody) add('inline-assembly');
        break;
      }
      case 'pragma':
        if (text(tokens, i + 1) === 'solidity' && isFloatingPragma(tokens, i)) {
          add('floating-pragma');
        }
        break;
    }
  }
  return hits;
}
