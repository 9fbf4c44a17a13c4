/** The four severities a finding can carry, most severe first. */
export const SEVERITIES = ['high', 'medium', 'low', 'info'] as const;

/** How serious a finding is. */
export type Severity = (typeof SEVERITIES)[number];

/** The stable identifiers of the twelve rules, in alphabetical order. */
export const RULE_IDS = [
  'delegatecall',
  'ecrecover',
  'floating-pragma',
  'inline-assembly',
  'missing-spdx',
  'reentrancy-value-call',
  'selfdestruct',
  'timestamp-dependence',
  'tx-origin',
  'unchecked-call',
  'unchecked-send',
  'weak-randomness',
] as const;

/** A rule identifier. */
export type RuleId = (typeof RULE_IDS)[number];

/** The fixed severity and developer-facing message of one rule. */
export interface RuleInfo {
  severity: Severity;
  message: string;
}

/** The fixed ruleset: one severity and one message per rule, never varying with the input. */
export const RULES: Readonly<Record<RuleId, RuleInfo>> = {
  'tx-origin': {
    severity: 'high',
    message:
      'tx.origin is used for authorization, so any contract the account calls can pass this check on its behalf (phishing). Use msg.sender for access control.',
  },
  delegatecall: {
    severity: 'medium',
    message:
      "delegatecall runs another contract's code against this contract's storage and balance. Make sure the target is a trusted address that callers cannot choose and that its storage layout matches.",
  },
  selfdestruct: {
    severity: 'high',
    message:
      'selfdestruct can destroy the contract and force-send its Ether, and is deprecated (EIP-6780). Remove it, or restrict it to a trusted role behind a timelock.',
  },
  'unchecked-call': {
    severity: 'medium',
    message:
      'The boolean result of this low-level call is discarded, so a failed call goes unnoticed. Capture and check it, e.g. (bool ok, ) = target.call(data); require(ok);',
  },
  'unchecked-send': {
    severity: 'medium',
    message:
      'The boolean result of send is discarded, so a failed transfer goes unnoticed. Check it, e.g. require(to.send(amount));, or use a checked call.',
  },
  'floating-pragma': {
    severity: 'low',
    message:
      'The compiler version is not pinned. Lock the pragma to the exact version you tested and deploy with, e.g. pragma solidity 0.8.26;',
  },
  'timestamp-dependence': {
    severity: 'low',
    message:
      'A condition depends on block.timestamp (or now), which block proposers can shift by several seconds. Do not rely on it for precise timing, tight deadlines or randomness.',
  },
  'weak-randomness': {
    severity: 'high',
    message:
      'Randomness derived from block values (timestamp, number, coinbase, prevrandao/difficulty, blockhash) is predictable or manipulable. Use a verifiable source such as Chainlink VRF or a commit-reveal scheme.',
  },
  'reentrancy-value-call': {
    severity: 'medium',
    message:
      'This low-level call sends Ether and forwards all remaining gas, so the recipient can re-enter this contract. Update state before the call (checks-effects-interactions) or add a reentrancy guard such as nonReentrant.',
  },
  'inline-assembly': {
    severity: 'info',
    message:
      "Inline assembly bypasses Solidity's type and memory safety checks. Review this block carefully, keep it minimal and cover it with tests.",
  },
  ecrecover: {
    severity: 'low',
    message:
      "ecrecover returns address(0) for an invalid signature and accepts malleable signatures. Reject a zero result, require a low s value and bind signatures to a nonce and chain id, or use OpenZeppelin's ECDSA library.",
  },
  'missing-spdx': {
    severity: 'info',
    message:
      'No SPDX license identifier comment was found. Add one at the top of the file, e.g. // SPDX-License-Identifier: MIT',
  },
};

/** One rule match before it is turned into a finding: the rule and its 1-based line. */
export interface Hit {
  line: number;
  rule: RuleId;
}

/** One reported finding. */
export interface Finding {
  line: number;
  rule: RuleId;
  message: string;
  snippet: string;
  severity: Severity;
}

/** Finding counts per severity; all four keys are always present. */
export type SeveritySummary = Record<Severity, number>;

/** The complete result of a scan. */
export interface SolidityScanResult {
  lines: number;
  summary: SeveritySummary;
  findings: Finding[];
  /** True when the findings were cut at `MAX_FINDINGS` (the summary still counts them all). */
  truncated: boolean;
  disclaimer: string;
}

/** The fixed disclaimer returned with every scan. */
export const DISCLAIMER =
  'This is an automated, deterministic pattern scan with a fixed ruleset, not a security audit: it can miss vulnerabilities and report false positives, so have the contract reviewed by a qualified auditor before deploying it.';

/**
 * Appended to every message when the source did not parse and the line-based fallback produced the
 * findings.
 */
export const FALLBACK_NOTE =
  ' (Approximate: the source did not parse (it does not lex as Solidity or its brackets do not balance), so this finding comes from a line-based match.)';
