import type { SolToken, TokenStream } from './tokens.js';

/** Per-token facts about where each code token sits, computed in one linear pass. */
export interface TokenContext {
  /**
   * 1 inside the parentheses of require(...), assert(...), if (...) or while (...), however deeply
   * nested.
   */
  guard: Uint8Array;
  /** 1 inside the arguments of keccak256, sha256, sha3 or ripemd160, however deeply nested. */
  hash: Uint8Array;
  /** 1 inside an inline assembly block. */
  asm: Uint8Array;
  /** The expression segment of each token (segments are split at , ; ? : && || and assignments). */
  segment: Int32Array;
  /** Per segment: 1 when the segment contains a comparison operator. */
  compares: number[];
  /**
   * Per segment: the enclosing segment it is transparent to (grouping or type-conversion
   * parentheses), or -1.
   */
  parent: number[];
}

const GUARD_WORDS = new Set(['require', 'assert', 'if', 'while']);
const HASH_WORDS = new Set(['keccak256', 'sha256', 'sha3', 'ripemd160']);
const NOT_CALLEE = new Set(['return', 'else', 'do', 'delete', 'emit', 'revert']);
const COMPARISONS = new Set(['==', '!=', '<', '>', '<=', '>=']);
const SEGMENT_BREAKS = new Set([
  ',',
  ';',
  '?',
  ':',
  '&&',
  '||',
  '=',
  '+=',
  '-=',
  '*=',
  '/=',
  '%=',
  '|=',
  '&=',
  '^=',
  '<<=',
  '>>=',
]);
const CONVERSION = /^(?:u?int\d*|bytes\d*|address|payable|bool)$/;

interface Frame {
  guard: number;
  hash: number;
  segment: number;
}

/**
 * Whether the parenthesis at `open` is transparent for comparisons: a grouping or a type
 * conversion.
 */
function isTransparentParen(tokens: SolToken[], open: number): boolean {
  const prev = tokens[open - 1];
  if (prev === undefined) return true;
  if (prev.kind === 'word') return NOT_CALLEE.has(prev.text) || CONVERSION.test(prev.text);
  return prev.kind === 'punct' && prev.text !== ')' && prev.text !== ']' && prev.text !== '}';
}

/** End index of the `{ ... }` body that follows the `assembly` keyword at `i`, or -1. */
function assemblyBodyEnd(stream: TokenStream, i: number): number {
  const { tokens, match } = stream;
  let j = i + 1;
  if (tokens[j]?.kind === 'string') j++;
  if (tokens[j]?.text === '(') j = (match[j] as number) + 1;
  return tokens[j]?.text === '{' ? (match[j] as number) : -1;
}

/** Computes guard, hash, assembly and comparison-segment facts for every token. */
export function buildContext(stream: TokenStream): TokenContext {
  const { tokens } = stream;
  const n = tokens.length;
  const guard = new Uint8Array(n);
  const hash = new Uint8Array(n);
  const asm = new Uint8Array(n);
  const segment = new Int32Array(n);
  const compares: number[] = [0];
  const parent: number[] = [-1];
  const frames: Frame[] = [];
  let current: Frame = { guard: 0, hash: 0, segment: 0 };
  let asmEnd = -1;
  const newSegment = (outer: number): number => {
    compares.push(0);
    parent.push(outer);
    return compares.length - 1;
  };

  for (let i = 0; i < n; i++) {
    const token = tokens[i] as SolToken;
    const text = token.text;
    guard[i] = current.guard;
    hash[i] = current.hash;
    segment[i] = current.segment;
    if (i <= asmEnd) asm[i] = 1;
    if (token.kind === 'word' && text === 'assembly') {
      asmEnd = Math.max(asmEnd, assemblyBodyEnd(stream, i));
    }
    if (token.kind !== 'punct') continue;
    if (text === '(' || text === '[') {
      const prev = tokens[i - 1];
      const prevWord = prev?.kind === 'word' ? prev.text : '';
      const transparent = text === '(' && isTransparentParen(tokens, i);
      frames.push(current);
      current = {
        guard: current.guard || (text === '(' && GUARD_WORDS.has(prevWord)) ? 1 : 0,
        hash: current.hash || (text === '(' && HASH_WORDS.has(prevWord)) ? 1 : 0,
        segment: newSegment(transparent ? current.segment : -1),
      };
    } else if (text === '{') {
      frames.push(current);
      current = { guard: 0, hash: 0, segment: newSegment(-1) };
    } else if (text === ')' || text === ']' || text === '}') {
      current = frames.pop() ?? { guard: 0, hash: 0, segment: 0 };
      segment[i] = current.segment;
    } else if (COMPARISONS.has(text)) {
      compares[current.segment] = 1;
    } else if (SEGMENT_BREAKS.has(text)) {
      const outer = parent[current.segment] ?? -1;
      current = { ...current, segment: newSegment(outer) };
    }
  }
  return { guard, hash, asm, segment, compares, parent };
}

/**
 * Whether the token at `i` is part of a comparison, looking through grouping and conversion
 * parentheses.
 */
export function inComparison(ctx: TokenContext, i: number): boolean {
  for (let s = ctx.segment[i] ?? -1; s !== -1; s = ctx.parent[s] ?? -1) {
    if (ctx.compares[s] === 1) return true;
  }
  return false;
}
