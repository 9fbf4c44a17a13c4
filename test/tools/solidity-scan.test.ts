import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DISCLAIMER, FALLBACK_NOTE, RULES, type RuleId } from '../../src/solidity/rules.js';
import { solidityScan } from '../../tools/solidity-scan.js';
import { testContext } from '../support/context.js';

const fixture = (name: string): string =>
  readFileSync(new URL(`../fixtures/solidity/${name}.sol`, import.meta.url), 'utf8');

async function scan(source: string) {
  return solidityScan.handler(solidityScan.input.parse({ source }), testContext());
}

const HEADER = '// SPDX-License-Identifier: MIT\npragma solidity 0.8.26;\n';

/** Wraps statements in a contract with a clean header, so only they can produce findings. */
function contractWith(body: string): string {
  return [
    `${HEADER}contract T {`,
    '  address owner;',
    '  event Seen(address who);',
    '  function f(address payable to, address target, bytes calldata data) external {',
    body,
    '  }',
    '}',
    '',
  ].join('\n');
}

/** Line of the first body statement produced by `contractWith`. */
const BODY_LINE = 7;

/** Rule, expected line, expected severity, and what the fixture contains. */
const ONE_RULE_FIXTURES: ReadonlyArray<readonly [RuleId, number, string, string]> = [
  ['tx-origin', 12, 'high', 'tx.origin used for authorization'],
  ['delegatecall', 12, 'medium', 'a delegatecall'],
  ['selfdestruct', 9, 'high', 'a selfdestruct'],
  ['unchecked-call', 6, 'medium', 'a low-level call whose result is discarded'],
  ['unchecked-send', 6, 'medium', 'a send whose result is discarded'],
  ['floating-pragma', 2, 'low', 'a caret pragma'],
  ['timestamp-dependence', 12, 'low', 'a condition on block.timestamp'],
  ['weak-randomness', 6, 'high', 'a hash of block.prevrandao reduced modulo'],
  ['reentrancy-value-call', 13, 'medium', 'a low-level call that sends Ether'],
  ['inline-assembly', 6, 'info', 'an assembly block'],
  ['ecrecover', 6, 'low', 'a call to ecrecover'],
  ['missing-spdx', 1, 'info', 'a file without an SPDX header'],
];

describe('solidity-scan', () => {
  describe('one fixture per rule', () => {
    for (const [rule, line, severity, sentence] of ONE_RULE_FIXTURES) {
      it(`reports ${sentence} as ${rule}, once, at line ${line}, ${severity}`, async () => {
        const result = await scan(fixture(rule));
        expect(result.findings).toHaveLength(1);
        const message = RULES[rule].message;
        expect(result.findings[0]).toMatchObject({ rule, line, severity, message });
      });
    }

    it('covers all twelve rules with the fixtures above', () => {
      expect(new Set(ONE_RULE_FIXTURES.map(([rule]) => rule))).toEqual(new Set(Object.keys(RULES)));
    });
  });

  it('reports tx.origin used for authorization as tx-origin', async () => {
    const result = await scan(fixture('tx-origin'));
    expect(result.findings[0]).toMatchObject({
      rule: 'tx-origin',
      line: 12,
      severity: 'high',
      snippet: 'require(tx.origin == owner, "not owner");',
    });
  });

  it('reports tx.origin in if conditions, comparisons and lookups inside require', async () => {
    const source = contractWith(
      [
        '    if (tx.origin != owner) revert();',
        '    bool isOwner = owner == tx.origin;',
        '    require(isOwner && allowed[tx.origin]);',
      ].join('\n'),
    );
    const { findings } = await scan(source);
    const lines = findings.filter((f) => f.rule === 'tx-origin').map((f) => f.line);
    expect(lines).toEqual([BODY_LINE, BODY_LINE + 1, BODY_LINE + 2]);
  });

  it('does not report bare tx.origin reads or the tx.origin == msg.sender EOA check', async () => {
    const source = contractWith(
      [
        '    address who = tx.origin;',
        '    emit Seen(tx.origin);',
        '    require(tx.origin == msg.sender, "no contracts");',
        '    require(msg.sender == tx.origin);',
      ].join('\n'),
    );
    expect((await scan(source)).findings).toEqual([]);
  });

  it('returns no findings for a clean contract with an SPDX header and a fixed pragma', async () => {
    const result = await scan(fixture('clean'));
    expect(result.findings).toEqual([]);
    expect(result.summary).toEqual({ high: 0, medium: 0, low: 0, info: 0 });
    expect(result.lines).toBe(34);
  });

  it('never fires on rule patterns that only appear in comments and string literals', async () => {
    const result = await scan(fixture('comments-and-strings'));
    expect(result.findings).toEqual([]);
  });

  it('accepts checked send and call results and reports the discarded ones', async () => {
    const result = await scan(fixture('send-and-call'));
    expect(result.findings.map((f) => [f.line, f.rule])).toEqual([
      [18, 'unchecked-send'],
      [19, 'unchecked-call'],
      [20, 'unchecked-call'],
      [21, 'unchecked-send'],
      [22, 'unchecked-call'],
      [23, 'unchecked-call'],
    ]);
    expect(result.findings.every((f) => f.severity === 'medium')).toBe(true);
  });

  it('does not treat a multi-argument send (e.g. ERC-777) as address.send', async () => {
    const result = await scan(contractWith('    token.send(to, 1, data);'));
    expect(result.findings).toEqual([]);
  });

  it('reports a value call that discards its result as both reentrancy-value-call and unchecked-call', async () => {
    const result = await scan(contractWith('    to.call{value: 1}("");'));
    expect(result.findings.map((f) => [f.line, f.rule])).toEqual([
      [BODY_LINE, 'reentrancy-value-call'],
      [BODY_LINE, 'unchecked-call'],
    ]);
  });

  it('still reports findings through the line-based fallback when the source does not parse', async () => {
    const result = await scan(fixture('broken'));
    expect(result.findings.map((f) => [f.line, f.rule, f.severity])).toEqual([
      [8, 'tx-origin', 'high'],
      [9, 'unchecked-send', 'medium'],
    ]);
    for (const finding of result.findings) {
      expect(finding.message).toBe(RULES[finding.rule].message + FALLBACK_NOTE);
    }
    expect(result.lines).toBe(10);
  });

  it('uses the fallback for characters Solidity cannot lex, still ignoring comments and strings', async () => {
    const source = [
      `${HEADER}# not solidity`,
      'selfdestruct(owner); // delegatecall(x)',
      'string s = "ecrecover(h, v, r, s)";',
      '',
    ].join('\n');
    const result = await scan(source);
    expect(result.findings.map((f) => [f.line, f.rule])).toEqual([[4, 'selfdestruct']]);
    expect(result.findings[0]?.message.endsWith(FALLBACK_NOTE)).toBe(true);
  });

  it('marks only fallback findings as approximate', async () => {
    const result = await scan(fixture('unchecked-send'));
    expect(result.findings[0]?.message).toBe(RULES['unchecked-send'].message);
  });

  it('returns identical output when the same source is scanned twice', async () => {
    const source = fixture('send-and-call') + fixture('broken');
    expect(await scan(source)).toEqual(await scan(source));
    const again = fixture('weak-randomness') + fixture('reentrancy-value-call');
    expect(await scan(again)).toEqual(await scan(again));
  });

  it('orders findings by line, then rule id, with no duplicate rule on a line', async () => {
    const source = [
      'pragma solidity >=0.8.0;',
      'contract T {',
      '  function f(address payable a, bytes calldata d) external {',
      '    require(tx.origin == a || tx.origin == b); a.delegatecall(d); a.delegatecall(d);',
      '  }',
      '}',
    ].join('\n');
    const result = await scan(source);
    expect(result.findings.map((f) => [f.line, f.rule])).toEqual([
      [1, 'floating-pragma'],
      [1, 'missing-spdx'],
      [4, 'delegatecall'],
      [4, 'tx-origin'],
      [4, 'unchecked-call'],
    ]);
  });

  it('counts lines and per-severity findings in the summary', async () => {
    const source = [
      'pragma solidity ^0.8.0;',
      'contract T {',
      '  function f() external { selfdestruct(payable(msg.sender)); }',
      '}',
      '',
    ].join('\n');
    const result = await scan(source);
    expect(result.lines).toBe(4);
    expect(result.summary).toEqual({ high: 1, medium: 0, low: 1, info: 1 });
    expect((await scan('contract T {}')).lines).toBe(1);
    expect((await scan('contract T {\n}\n\n')).lines).toBe(3);
  });

  it('returns the trimmed source line as the snippet, capped at 200 characters', async () => {
    const long = `    selfdestruct(payable(owner)); // ${'x'.repeat(300)}`;
    const result = await scan(contractWith(long));
    const snippet = result.findings[0]?.snippet ?? '';
    expect(snippet.length).toBeLessThanOrEqual(200);
    expect(snippet.startsWith('selfdestruct(payable(owner));')).toBe(true);
    expect(snippet.endsWith('…')).toBe(true);
  });

  it('returns the fixed disclaimer and output that parses with the output schema', async () => {
    for (const name of ['clean', 'send-and-call', 'broken', 'missing-spdx']) {
      const result = await scan(fixture(name));
      expect(result.disclaimer).toBe(DISCLAIMER);
      expect(() => solidityScan.output.parse(result)).not.toThrow();
    }
  });

  it('returns at most 1000 findings for a source full of them, flags the cut, and still counts them all', async () => {
    const line =
      'tx.origin; block.timestamp; selfdestruct(x); a.delegatecall(b); assembly {} ecrecover(h,v,r,s); x.send(1);\n';
    const source = line.repeat(Math.floor((510 * 1024) / line.length));
    const result = await scan(source);
    expect(result.findings).toHaveLength(1000);
    expect(result.truncated).toBe(true);
    const counted = Object.values(result.summary).reduce((a, b) => a + b, 0);
    expect(counted).toBeGreaterThan(10_000);
    // The first findings by line are kept, and the answer stays far below the output limit (it was 10 MB).
    expect(result.findings.at(-1)!.line).toBeLessThan(200);
    expect(Buffer.byteLength(JSON.stringify(result))).toBeLessThan(512 * 1024);
    expect(() => solidityScan.output.parse(result)).not.toThrow();
    expect((await scan(fixture('send-and-call'))).truncated).toBe(false);
  });

  it('rejects a source over 512 KB (measured in UTF-8 bytes) with a clear message', () => {
    const tooBig = solidityScan.input.safeParse({ source: 'a'.repeat(512 * 1024 + 1) });
    expect(tooBig.success).toBe(false);
    expect(tooBig.error?.issues[0]?.message).toMatch(/at most 512 KB/);
    // 262145 two-byte characters: under the limit in characters, over it in UTF-8 bytes.
    expect(solidityScan.input.safeParse({ source: 'é'.repeat(262_145) }).success).toBe(false);
    expect(solidityScan.input.safeParse({ source: 'a'.repeat(512 * 1024) }).success).toBe(true);
  });

  it('rejects an empty or missing source', () => {
    expect(solidityScan.input.safeParse({ source: '' }).success).toBe(false);
    expect(solidityScan.input.safeParse({}).success).toBe(false);
  });

  it('is defined as a POST tools endpoint with the specified prices and body limit', () => {
    expect(solidityScan).toMatchObject({
      name: 'solidity-scan',
      group: 'tools',
      method: 'POST',
      path: '/api/solidity-scan',
      price: { default: '10000', optimism: '11000', stellar: '100000' },
      annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
      maxBodyBytes: 600 * 1024,
    });
  });
});
