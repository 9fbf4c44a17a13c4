import type { Hit } from './rules.js';
import type { SolToken, TokenStream } from './tokens.js';

/** Members whose call returns a success boolean that must be checked. */
export const LOW_LEVEL_MEMBERS = new Set(['call', 'delegatecall', 'staticcall', 'send']);

/**
 * Words that end a receiver expression when walking backwards (they start statements, not
 * operands).
 */
const STOP_WORDS = new Set([
  'return',
  'emit',
  'else',
  'do',
  'delete',
  'if',
  'while',
  'for',
  'revert',
  'throw',
  'unchecked',
  'try',
  'catch',
  'assembly',
  'returns',
  'new',
]);
/** Longest receiver chain walked back before giving up (keeps pathological chains linear). */
const MAX_RECEIVER_STEPS = 32;
const LOOP_HEADERS = new Set(['if', 'while', 'for']);
/** Tokens after which a new statement starts. */
const STATEMENT_BOUNDARIES = new Set([';', '{', '}', 'else', 'do']);

function text(tokens: SolToken[], i: number): string {
  return tokens[i]?.text ?? '';
}

function isOperand(token: SolToken | undefined): boolean {
  return token !== undefined && token.kind !== 'punct' && !STOP_WORDS.has(token.text);
}

/**
 * Whether the token at `k` is the `)` closing an `if (...)`, `while (...)` or `for (...)` header.
 */
function closesHeader(stream: TokenStream, k: number): boolean {
  if (text(stream.tokens, k) !== ')') return false;
  return LOOP_HEADERS.has(text(stream.tokens, (stream.match[k] as number) - 1));
}

/**
 * Whether a bracket group opened at `open` is applied to what precedes it (a call or index), not a
 * grouping.
 */
function isAppliedGroup(stream: TokenStream, open: number): boolean {
  const before = stream.tokens[open - 1];
  if (isOperand(before)) return true;
  return (before?.text === ')' && !closesHeader(stream, open - 1)) || before?.text === ']';
}

/** Index of the first token of the receiver expression ending just before the `.` at `dot`. */
function receiverStart(stream: TokenStream, dot: number): number {
  const { tokens, match } = stream;
  let k = dot - 1;
  for (let steps = 0; steps < MAX_RECEIVER_STEPS && k >= 0; steps++) {
    const t = text(tokens, k);
    if (t === ')' || t === ']') {
      const open = match[k] as number;
      if (!isAppliedGroup(stream, open)) return open;
      k = open - 1;
      continue;
    }
    if (!isOperand(tokens[k])) return k + 1;
    if (text(tokens, k - 1) !== '.') return k;
    k -= 2;
  }
  return k + 1;
}

/** Number of top-level, comma-separated arguments between the parentheses at `open` and `close`. */
function argumentCount(stream: TokenStream, open: number, close: number): number {
  if (close === open + 1) return 0;
  let count = 1;
  for (let k = open + 1; k < close; k++) {
    const t = text(stream.tokens, k);
    if (t === '(' || t === '[' || t === '{') k = stream.match[k] as number;
    else if (t === ',') count++;
  }
  return count;
}

/**
 * Whether the expression spanning tokens `start`..`end` is a whole statement whose value is thrown
 * away.
 */
function resultDiscarded(stream: TokenStream, start: number, end: number): boolean {
  const { tokens, match } = stream;
  // Look through redundant grouping parentheses: (x.send(1));
  while (text(tokens, start - 1) === '(' && match[start - 1] === end + 1) {
    if (isAppliedGroup(stream, start - 1)) break;
    start--;
    end++;
  }
  if (text(tokens, end + 1) !== ';') return false;
  const prev = text(tokens, start - 1);
  if (start === 0 || STATEMENT_BOUNDARIES.has(prev)) return true;
  if (prev === ')') return closesHeader(stream, start - 1);
  if (prev === '=' && text(tokens, start - 2) === ')') {
    // (, bytes memory data) = target.call(...): the success flag is the skipped first component.
    return text(tokens, (match[start - 2] as number) + 1) === ',';
  }
  return false;
}

/**
 * Judges the low-level member call whose member name is at `member` (`.call`, `.delegatecall`,
 * `.staticcall` or `.send`): an unchecked result, and for `.call`, whether it forwards Ether.
 */
export function analyzeLowLevelCall(stream: TokenStream, member: number): Hit[] {
  const { tokens, match } = stream;
  const name = text(tokens, member);
  const line = (tokens[member] as SolToken).line;
  let sendsValue = false;
  let j = member + 1;
  if (text(tokens, j) === '{') {
    const close = match[j] as number;
    for (let k = j + 1; k < close; k++) {
      const t = text(tokens, k);
      if (t === '(' || t === '[' || t === '{') k = match[k] as number;
      else if (t === 'value' && text(tokens, k + 1) === ':') sendsValue = true;
    }
    j = close + 1;
  }
  // Legacy call options: target.call.value(v).gas(g)(data)
  while (text(tokens, j) === '.' && text(tokens, j + 2) === '(') {
    const option = text(tokens, j + 1);
    if (option !== 'value' && option !== 'gas') break;
    if (option === 'value') sendsValue = true;
    j = (match[j + 2] as number) + 1;
  }
  if (text(tokens, j) !== '(') return [];
  const close = match[j] as number;
  const hits: Hit[] = [];
  if (name === 'call' && sendsValue) hits.push({ line, rule: 'reentrancy-value-call' });
  // address.send takes exactly one argument; other arities are other methods (e.g. ERC-777 send).
  if (name === 'send' && argumentCount(stream, j, close) !== 1) return hits;
  if (resultDiscarded(stream, receiverStart(stream, member - 1), close)) {
    hits.push({ line, rule: name === 'send' ? 'unchecked-send' : 'unchecked-call' });
  }
  return hits;
}
