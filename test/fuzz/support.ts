import { expect } from 'vitest';
import type { AnyToolDefinition } from '../../src/tool/tool.js';

/** Abuse limits off: the fuzz runs send thousands of requests from 127.0.0.1 and must meet the routes, not the buckets. */
export const LIMITS_OFF = {
  RATE_LIMIT_IP_PER_MINUTE: '0',
  RATE_LIMIT_PAYER_PER_MINUTE: '0',
  RATE_LIMIT_TOOL_PER_MINUTE: '0',
};

/** Paths besides the tools' that every instance serves (health, metrics, discovery, MCP) or may serve. */
export const OTHER_PATHS = [
  '/',
  '/mcp',
  '/healthz',
  '/readyz',
  '/metrics',
  '/openapi.json',
  '/.well-known/x402',
  '/llms.txt',
];

/** Statuses the server may answer whatever it is sent: anything but a server error (readiness says 503 by design). */
export function expectNoServerError(status: number, path: string, what: string): void {
  const allowed = status < 500 || (path.startsWith('/readyz') && status === 503);
  expect(allowed, `${what} → ${status}`).toBe(true);
}

/** An answer's body as JSON, or undefined when it is not JSON. */
export async function jsonOf(res: Response): Promise<Record<string, unknown> | undefined> {
  const text = await res.text();
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

/** The 400 invalid-input answer: an error body naming a field, nothing charged. */
export function expectInvalidInput(body: Record<string, unknown> | undefined, what: string): void {
  const error = body?.error as { code?: string; field?: string } | undefined;
  expect(error?.code, `${what}: ${JSON.stringify(body)?.slice(0, 300)}`).toBe('invalid_input');
  expect(typeof error?.field, what).toBe('string');
}

/** The 402 challenge: the x402 PaymentRequired body. */
export function expectChallenge(body: Record<string, unknown> | undefined, what: string): void {
  expect(body?.x402Version, `${what}: ${JSON.stringify(body)?.slice(0, 300)}`).toBeTypeOf('number');
  expect(Array.isArray(body?.accepts), what).toBe(true);
}

/** Sum of the handler runs a `countingTools` map recorded. */
export function totalRuns(runs: Map<string, number>): number {
  return [...runs.values()].reduce((a, b) => a + b, 0);
}

/** Whether the schema of a tool accepts an input; `undefined` stands for "no input" (a bare probe). */
export function accepts(tool: AnyToolDefinition, input: unknown): boolean {
  return tool.input.safeParse(input).success;
}

/** Fails when something wrote onto Object.prototype (prototype pollution reached the process). */
export function expectUnpolluted(): void {
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  expect(Object.prototype).not.toHaveProperty('polluted');
}
