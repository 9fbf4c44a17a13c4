import { lazyRequire } from '../shared/lazy.js';

/** `@solidity-parser/parser`, loaded on the first scan. */
const parser = lazyRequire<typeof import('@solidity-parser/parser')>('@solidity-parser/parser');

/** The coarse class of a code token. */
export type TokenKind = 'word' | 'number' | 'string' | 'punct';

/** One code token (comments are dropped): its text, class and 1-based line. */
export interface SolToken {
  text: string;
  kind: TokenKind;
  line: number;
}

/** The code tokens of a source, with the index of each bracket's partner (-1 for other tokens). */
export interface TokenStream {
  tokens: SolToken[];
  match: Int32Array;
}

interface RawToken {
  value?: string;
  range?: [number, number];
}

/** Any character the Solidity lexer rejects outside comments and strings. */
const INVALID_CODE_CHAR = /[^A-Za-z0-9_$ \t\r\n\f()[\]{};,.:?=+\-*/%!~&|^<>]/;
const STRING_START = /^(?:hex|unicode)?["']/;
const OPENERS: Readonly<Record<string, string>> = { '(': ')', '[': ']', '{': '}' };

function kindOf(text: string): TokenKind {
  if (STRING_START.test(text)) return 'string';
  const c = text.charCodeAt(0);
  if (c >= 48 && c <= 57) return 'number';
  if (c === 46 /* . */ && text.length > 1) return 'number';
  if (c === 95 || c === 36 || (c >= 65 && c <= 90) || (c >= 97 && c <= 122)) return 'word';
  return 'punct';
}

function isWhitespace(c: number): boolean {
  return c === 32 || c === 9 || c === 10 || c === 13 || c === 12;
}

/**
 * Runs the parser package's lexer with its console error listener silenced (it reports to
 * console.error).
 */
function lexQuietly(source: string): RawToken[] {
  const original = console.error;
  console.error = () => {};
  try {
    return parser().tokenize(source, { range: true }) as RawToken[];
  } catch {
    return [];
  } finally {
    console.error = original;
  }
}

/** Pairs every bracket with its partner; null when brackets are unbalanced or mismatched. */
function matchBrackets(tokens: SolToken[]): Int32Array | null {
  const match = new Int32Array(tokens.length).fill(-1);
  const stack: number[] = [];
  for (let i = 0; i < tokens.length; i++) {
    const text = (tokens[i] as SolToken).text;
    if (text === '(' || text === '[' || text === '{') {
      stack.push(i);
    } else if (text === ')' || text === ']' || text === '}') {
      const open = stack.pop();
      if (open === undefined || OPENERS[(tokens[open] as SolToken).text] !== text) return null;
      match[open] = i;
      match[i] = open;
    }
  }
  return stack.length === 0 ? match : null;
}

/**
 * Lexes Solidity with `@solidity-parser/parser`'s tokenizer; null when the source does not lex cleanly
 * (a character the lexer rejects, an unterminated literal) or its brackets do not balance.
 */
export function lexSolidity(source: string, strippedCode: string): TokenStream | null {
  // The stripped code has no comments or strings left, so any stray character means a lexer error;
  // checking first avoids the lexer's very slow per-character error recovery on garbage input.
  if (INVALID_CODE_CHAR.test(strippedCode)) return null;
  const raw = lexQuietly(source);
  const tokens: SolToken[] = [];
  let covered = 0;
  let line = 1;
  let nextNewline = source.indexOf('\n');
  for (const token of raw) {
    const text = token.value;
    const range = token.range;
    if (text === undefined || range === undefined) return null;
    const [start, end] = range;
    for (let k = covered; k < start; k++) {
      if (!isWhitespace(source.charCodeAt(k))) return null;
    }
    covered = Math.max(covered, end);
    if (text.startsWith('//') || text.startsWith('/*')) continue;
    while (nextNewline !== -1 && nextNewline < start) {
      line++;
      nextNewline = source.indexOf('\n', nextNewline + 1);
    }
    tokens.push({ text, kind: kindOf(text), line });
  }
  for (let k = covered; k < source.length; k++) {
    if (!isWhitespace(source.charCodeAt(k))) return null;
  }
  const match = matchBrackets(tokens);
  return match === null ? null : { tokens, match };
}
