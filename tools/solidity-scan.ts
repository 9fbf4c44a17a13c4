import { z } from 'zod';
import { RULE_IDS, SEVERITIES } from '../src/solidity/rules.js';
import { MAX_FINDINGS } from '../src/solidity/scan.js';
import { defineTool } from '../src/tool/tool.js';

/** Largest accepted source, in UTF-8 bytes (512 KB). */
const MAX_SOURCE_BYTES = 512 * 1024;

const SoliditySourceSchema = () =>
  z
    .string()
    .min(1, 'source must not be empty')
    .refine((source) => Buffer.byteLength(source, 'utf8') <= MAX_SOURCE_BYTES, {
      message: `source must be at most 512 KB (${MAX_SOURCE_BYTES} bytes of UTF-8)`,
    });

const SolidityScanInputSchema = () =>
  z.object({
    source: SoliditySourceSchema().describe(
      'Solidity source code of one file, as plain text; at most 512 KB (524288 bytes of UTF-8).',
    ),
  });

const SeverityCountSchema = () => z.number().int().nonnegative();

const FindingSchema = () =>
  z.object({
    line: z.number().int().positive().describe('1-based line number of the match.'),
    rule: z.enum(RULE_IDS).describe('Stable rule identifier, e.g. `tx-origin` or `unchecked-call`.'),
    message: z.string().describe('What the pattern risks and what to do about it.'),
    snippet: z.string().describe('The trimmed source line, cut to at most 200 characters.'),
    severity: z.enum(SEVERITIES).describe('`high`, `medium`, `low` or `info`; fixed per rule.'),
  });

const SolidityScanOutputSchema = () =>
  z.object({
    lines: z.number().int().nonnegative().describe('Number of lines in the source.'),
    summary: z
      .object({
        low: SeverityCountSchema().describe('Number of low-severity findings.'),
        high: SeverityCountSchema().describe('Number of high-severity findings.'),
        info: SeverityCountSchema().describe('Number of informational findings.'),
        medium: SeverityCountSchema().describe('Number of medium-severity findings.'),
      })
      .describe('Finding counts per severity; all four keys are always present.'),
    findings: z
      .array(FindingSchema())
      .describe(
        `Findings ordered by line, then rule id; at most one per rule and line, and at most ${MAX_FINDINGS} (the first by line).`,
      ),
    truncated: z
      .boolean()
      .describe(`True when there were more than ${MAX_FINDINGS} findings: \`summary\` still counts them all.`),
    disclaimer: z.string().describe('Fixed reminder that this is an automated pattern scan, not an audit.'),
  });

/** Deterministic static pattern scan of Solidity source with a fixed twelve-rule ruleset. */
export const solidityScan = defineTool({
  name: 'solidity-scan',
  title: 'Solidity static pattern scan',
  description:
    'Scans one Solidity source file with a fixed, deterministic ruleset of 12 pattern rules: tx-origin ' +
    '(tx.origin used for authorization), delegatecall, selfdestruct, unchecked-call and unchecked-send ' +
    '(boolean result of .call/.delegatecall/.staticcall/.send discarded), floating-pragma, ' +
    'timestamp-dependence, weak-randomness (block values used as randomness), reentrancy-value-call ' +
    '(low-level call that sends Ether), inline-assembly, ecrecover and missing-spdx. Returns the line ' +
    'count, per-severity counts (high, medium, low, info) and findings ordered by line, each with ' +
    'its 1-based line, rule id, severity, a message saying what to fix, and the trimmed source line. ' +
    'Comments and string literals never trigger rules. Source that does not parse (does not lex as ' +
    'Solidity, or unbalanced brackets) is still scanned line by line, and those messages say they are ' +
    'approximate. An automated pattern scan, not an audit. ' +
    'Body: `source` (up to 512 KB).',
  group: 'tools',
  method: 'POST',
  path: '/api/solidity-scan',
  input: SolidityScanInputSchema,
  output: SolidityScanOutputSchema,
  pricing: { usd: '0.01', accepts: 'every-network' },
  example: {
    source:
      '// SPDX-License-Identifier: MIT\npragma solidity ^0.8.20;\ncontract Vault { function owner() external view returns (address) { return tx.origin; } }\n',
  },
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  maxBodyBytes: 600 * 1024,
  // Lexing and matching grow with the source (up to ~1 s for 512 KB): the scan runs on a worker thread.
  worker: { job: 'solidity-scan' },
  handler: (input, ctx) => ctx.offload('solidity-scan', input.source),
});
