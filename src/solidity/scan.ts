import { detectInTokens } from './detect.js';
import { detectInLines } from './fallback.js';
import {
  DISCLAIMER,
  FALLBACK_NOTE,
  RULES,
  type Finding,
  type Hit,
  type SeveritySummary,
  type SolidityScanResult,
} from './rules.js';
import { stripCommentsAndStrings } from './strip.js';
import { lexSolidity } from './tokens.js';

/**
 * Most findings returned (the first by line): a 510 KB source of rule-dense lines has ~30,000, an 11 MB answer. The
 * summary still counts them all and `truncated` says the list was cut.
 */
export const MAX_FINDINGS = 1000;

/** Longest snippet returned, in UTF-16 code units (an ellipsis marks a cut). */
export const MAX_SNIPPET_LENGTH = 200;

/**
 * Number of lines in a source: newline-separated, not counting an empty remainder after a final
 * newline.
 */
export function countLines(source: string): number {
  if (source === '') return 0;
  let count = 1;
  for (let i = source.indexOf('\n'); i !== -1; i = source.indexOf('\n', i + 1)) count++;
  return source.endsWith('\n') ? count - 1 : count;
}

/**
 * Start offsets of the first `upTo` lines (enough to cut snippets without splitting the whole
 * source).
 */
function lineStarts(source: string, upTo: number): number[] {
  const starts = [0];
  let i = source.indexOf('\n');
  while (i !== -1 && starts.length < upTo) {
    starts.push(i + 1);
    i = source.indexOf('\n', i + 1);
  }
  return starts;
}

function snippetOf(source: string, starts: number[], line: number): string {
  const start = starts[line - 1] ?? source.length;
  const newline = source.indexOf('\n', start);
  const text = source.slice(start, newline === -1 ? source.length : newline).trim();
  if (text.length <= MAX_SNIPPET_LENGTH) return text;
  let cut = MAX_SNIPPET_LENGTH - 1;
  const last = text.charCodeAt(cut - 1);
  if (last >= 0xd800 && last <= 0xdbff) cut--; // do not split a surrogate pair
  return `${text.slice(0, cut)}…`;
}

/** Turns raw hits into findings: one per rule and line, ordered by line then rule id. */
function toFindings(source: string, hits: Hit[], fallback: boolean): Finding[] {
  const unique = new Map<string, Hit>();
  for (const hit of hits) unique.set(`${hit.line}\u0000${hit.rule}`, hit);
  const sorted = [...unique.values()].sort((a, b) =>
    a.line !== b.line ? a.line - b.line : a.rule < b.rule ? -1 : a.rule > b.rule ? 1 : 0,
  );
  const starts = lineStarts(source, sorted.at(-1)?.line ?? 1);
  return sorted.map(({ line, rule }) => {
    const { severity, message } = RULES[rule];
    return {
      line,
      rule,
      message: fallback ? message + FALLBACK_NOTE : message,
      snippet: snippetOf(source, starts, line),
      severity,
    };
  });
}

function summarize(findings: Finding[]): SeveritySummary {
  const summary: SeveritySummary = { high: 0, medium: 0, low: 0, info: 0 };
  for (const finding of findings) summary[finding.severity]++;
  return summary;
}

/**
 * Scans Solidity source with the fixed ruleset in `RULES`, on `@solidity-parser/parser` tokens so comments and
 * strings never match, or line by line (messages carry `FALLBACK_NOTE`) when the source does not parse.
 */
export function scanSolidity(source: string): SolidityScanResult {
  const stripped = stripCommentsAndStrings(source);
  const stream = stripped.complete ? lexSolidity(source, stripped.code) : null;
  const hits = stream === null ? detectInLines(stripped.code) : detectInTokens(stream);
  if (!stripped.hasSpdx) hits.push({ line: 1, rule: 'missing-spdx' });
  const findings = toFindings(source, hits, stream === null);
  return {
    lines: countLines(source),
    summary: summarize(findings),
    findings: findings.length > MAX_FINDINGS ? findings.slice(0, MAX_FINDINGS) : findings,
    truncated: findings.length > MAX_FINDINGS,
    disclaimer: DISCLAIMER,
  };
}
