import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect } from 'vitest';
import type { ReceiptsReport, Total } from '../../src/receipts/receipts.js';
import type { PaymentClaim, Store } from '../../src/store/store.js';
import { CLI_PATH } from './mcp.js';

const run = promisify(execFile);

/** Base mainnet's CAIP-2 id. */
export const BASE = 'eip155:8453';

/** A store for one `tollbooth receipts` suite: the environment pointing the CLI at it, how to open it, how to remove it. */
export interface ReceiptsStore {
  env: Record<string, string>;
  open: () => Promise<Store>;
  tearDown: () => Promise<void>;
}

/** Runs the built `tollbooth receipts` with only the given environment; never throws on a non-zero exit. */
export async function receipts(
  env: Record<string, string>,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI_PATH, 'receipts', ...args], {
      env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'silent', ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** Runs `tollbooth receipts --json` and reads its report (the exit code must be 0). */
export async function json(env: Record<string, string>, ...args: string[]): Promise<ReceiptsReport> {
  const result = await receipts(env, '--json', ...args);
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as ReceiptsReport;
}

let clock = Date.parse('2026-03-01T12:00:00.000Z');
/** A time one minute later than the previous one: rows written in order are listed in reverse. */
export const at = (): string => new Date((clock += 60_000)).toISOString();

/** A claim paid over HTTP by `0xpayer-<key>`. */
export const claimOf = (key: string, tool: string, network: string, amount: string): PaymentClaim => ({
  replayKey: key,
  tool,
  network,
  payer: `0xpayer-${key}`,
  amount,
  transport: 'http',
});

/** The total of one network (and tool) in a list of totals. */
export const total = (list: Total[], network: string, tool?: string): Total | undefined =>
  list.find((t) => t.network === network && (tool === undefined || t.tool === tool));
