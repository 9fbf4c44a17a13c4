import type { Hit, RuleId } from './rules.js';

/** A line-based rule: fires on a stripped code line when `test` says so. */
interface LineRule {
  rule: RuleId;
  test: (line: string) => boolean;
}

// Every quantifier that can span a line is bounded so a huge single-line input stays linear.
const TX_ORIGIN = /(?<![\w$.])tx\s*\.\s*origin\b/g;
const EOA_CHECK = /tx\s*\.\s*origin\s*[!=]=\s*msg\s*\.\s*sender\b|msg\s*\.\s*sender\s*[!=]=\s*tx\s*\.\s*origin\b/;
const GUARD = /(?<![\w$.])(?:require|assert|if|while)\s*\(/;
const EQUALITY = /[!=]=/;
const COMPARISON = /[!=]=|<=|>=|(?<![<=])<(?![<=])|(?<![>=-])>(?![>=])/;
const TIMESTAMP = /(?<![\w$.])block\s*\.\s*timestamp\b|(?<![\w$.])now\b(?!\s*\()/;
const ALWAYS_RANDOM =
  /(?<![\w$.])block\s*\.\s*(?:difficulty|prevrandao)\b|(?<![\w$])blockhash\s*\(|(?<![\w$.])(?:prevrandao|difficulty)\s*\(/;
const MIXABLE = /(?<![\w$.])block\s*\.\s*(?:timestamp|number|coinbase)\b|(?<![\w$.])now\b(?!\s*\()/;
const MODULO = /(?:(?<![\w$.])block\s*\.\s*(?:timestamp|number|coinbase)|(?<![\w$.])now)\s*%/;
const HASH_CALL = /(?<![\w$.])(?:keccak256|sha256|sha3|ripemd160)\s*\(/;
const DELEGATECALL = /\.\s*delegatecall\b|(?<![\w$.])delegatecall\s*\(/;
const SELFDESTRUCT = /(?<![\w$.]|function\s{1,20})(?:selfdestruct|suicide)\s*\(/;
const ECRECOVER = /(?<![\w$.]|function\s{1,20})ecrecover\s*\(/;
const ASSEMBLY = /(?<![\w$.])assembly\s*(?:\{|\(|$)/;
const VALUE_CALL = /\.\s*call\s*(?:\{[^}]{0,200}\bvalue\s*:|\.\s*value\s*\()/;
const PRAGMA = /(?<![\w$.])pragma\s+solidity\b([^;]{0,200})/;
const EXACT_VERSION = /^=?\d+\.\d+\.\d+$/;
const LOW_LEVEL = /\.\s*(call|delegatecall|staticcall|send)\b/g;
const YUL_POP_CALL = /(?<![\w$.])pop\s*\(\s*(?:call|delegatecall|staticcall)\s*\(/;
/**
 * A statement prefix that is only a receiver expression (e.g. `} else payable(to)`), so the result
 * is dropped.
 */
const BARE_RECEIVER = /^\s*(?:\}\s*)?(?:else\s+)?[\w$.\s[\]()]*$/;
const NOT_RECEIVER_WORD = /(?<![\w$.])(?:return|require|assert|if|while|for|emit|bool|revert)\b/;
const SEND_WITH_COMMA = /^\s*\((?:[^(),]|\([^()]*\))*,/;
const MAX_PREFIX = 400;

function countMatches(re: RegExp, line: string): number {
  re.lastIndex = 0;
  let count = 0;
  while (re.exec(line) !== null) count++;
  return count;
}

/**
 * tx.origin in a guard or comparison, unless the line's only use is the `tx.origin == msg.sender`
 * EOA check.
 */
function txOriginAuthorizes(line: string): boolean {
  const uses = countMatches(TX_ORIGIN, line);
  if (uses === 0 || !(GUARD.test(line) || EQUALITY.test(line))) return false;
  return !(uses === 1 && EOA_CHECK.test(line));
}

/** The low-level calls on a line whose boolean result is discarded, by member name. */
function discardedCalls(line: string): Set<string> {
  const found = new Set<string>();
  LOW_LEVEL.lastIndex = 0;
  for (let m = LOW_LEVEL.exec(line); m !== null; m = LOW_LEVEL.exec(line)) {
    if (m.index > MAX_PREFIX) continue;
    const prefix = line.slice(0, m.index);
    if (!BARE_RECEIVER.test(prefix) || NOT_RECEIVER_WORD.test(prefix)) continue;
    const member = m[1] as string;
    const rest = line.slice(m.index + m[0].length, m.index + m[0].length + MAX_PREFIX);
    if (!/^\s*[({.]/.test(rest) || /^[^;]*(?:[!=]=|&&|\|\||\?)/.test(rest)) continue;
    // address.send takes one argument; a comma means another method (e.g. ERC-777 send).
    if (member === 'send' && SEND_WITH_COMMA.test(rest)) continue;
    found.add(member);
  }
  return found;
}

const LINE_RULES: readonly LineRule[] = [
  { rule: 'tx-origin', test: txOriginAuthorizes },
  { rule: 'delegatecall', test: (l) => DELEGATECALL.test(l) },
  { rule: 'selfdestruct', test: (l) => SELFDESTRUCT.test(l) },
  {
    rule: 'floating-pragma',
    test: (l) => {
      const m = PRAGMA.exec(l);
      return m !== null && !EXACT_VERSION.test((m[1] ?? '').replace(/\s+/g, ''));
    },
  },
  {
    rule: 'timestamp-dependence',
    test: (l) => TIMESTAMP.test(l) && (GUARD.test(l) || COMPARISON.test(l)),
  },
  {
    rule: 'weak-randomness',
    test: (l) => ALWAYS_RANDOM.test(l) || MODULO.test(l) || (MIXABLE.test(l) && HASH_CALL.test(l)),
  },
  { rule: 'reentrancy-value-call', test: (l) => VALUE_CALL.test(l) },
  { rule: 'inline-assembly', test: (l) => ASSEMBLY.test(l) },
  { rule: 'ecrecover', test: (l) => ECRECOVER.test(l) },
];

/**
 * Line-based fallback for source that does not parse: runs regex versions of the rules (except missing-spdx)
 * over code whose comments and strings were already blanked, one line at a time.
 */
export function detectInLines(strippedCode: string): Hit[] {
  const hits: Hit[] = [];
  const lines = strippedCode.split('\n');
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index] as string;
    if (line.trim() === '') continue;
    const lineNo = index + 1;
    for (const { rule, test } of LINE_RULES) {
      if (test(line)) hits.push({ line: lineNo, rule });
    }
    const discarded = discardedCalls(line);
    if (discarded.has('send')) hits.push({ line: lineNo, rule: 'unchecked-send' });
    if (discarded.has('call') || discarded.has('delegatecall') || discarded.has('staticcall')) {
      hits.push({ line: lineNo, rule: 'unchecked-call' });
    }
    if (YUL_POP_CALL.test(line)) hits.push({ line: lineNo, rule: 'unchecked-call' });
  }
  return hits;
}
