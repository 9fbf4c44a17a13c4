import { describe, expect, it } from 'vitest';
import type { ToolContext } from '../../src/tool/tool.js';
import { runJob } from '../../src/workers/jobs.js';
import { passwordStrength } from '../../tools/password-strength.js';
import { testContext } from '../support/context.js';

async function call(password: string) {
  const result = await passwordStrength.handler(passwordStrength.input.parse({ password }), testContext());
  return passwordStrength.output.parse(result);
}

describe('password-strength', () => {
  it('rates "password" as very weak with score 0', async () => {
    const out = await call('password');
    expect(out.score).toBe(0);
    expect(out.rating).toBe('very weak');
    expect(out.crackTime).toBe('less than a second');
    expect(out.entropyBits).toBeLessThan(5);
  });

  it('gives "correcthorsebatterystaple" a high score', async () => {
    const out = await call('correcthorsebatterystaple');
    expect(out.score).toBeGreaterThanOrEqual(3);
    expect(out.entropyBits).toBe(Math.round(Math.log2(6272293312000)));
  });

  it('rates a random 20-character mixed string as very strong with score 4', async () => {
    const out = await call('Xk9#mQ2$vL7!pR4@wZ8n');
    expect(out).toMatchObject({ score: 4, rating: 'very strong', crackTime: 'centuries' });
    expect(out.entropyBits).toBeGreaterThanOrEqual(60);
  });

  it('maps every score to its rating word', async () => {
    const ratings = ['very weak', 'weak', 'fair', 'strong', 'very strong'];
    for (const password of ['password', 'P@$$w0rd1', 'm0nk3y$h1n3', 'L3tM31n!2024', 'Xk9#mQ2$vL7!pR4@wZ8n']) {
      const out = await call(password);
      expect(out.rating).toBe(ratings[out.score]);
    }
  });

  it('derives entropyBits as an integer from the guess count', async () => {
    const out = await call('tr0ub4dor&3');
    expect(Number.isInteger(out.entropyBits)).toBe(true);
    expect(out.entropyBits).toBe(Math.round(11 * Math.log2(10)));
  });

  it('rejects an empty password as invalid input', () => {
    const parsed = passwordStrength.input.safeParse({ password: '' });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.path).toEqual(['password']);
  });

  it('rejects a 100,000-character password before any analysis', () => {
    const parsed = passwordStrength.input.safeParse({ password: 'a'.repeat(100_000) });
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.path).toEqual(['password']);
  });

  it('hands the worker job only the first 256 characters of a long password, whatever its length', async () => {
    const head = Array.from({ length: 256 }, (_, i) => String.fromCharCode(33 + ((i * 7919) % 94))).join('');
    const analysed: string[] = [];
    const offload = (async (job: 'password-strength', password: string) => {
      analysed.push(password);
      return runJob(job, password);
    }) as ToolContext['offload'];
    const input = passwordStrength.input.parse({ password: head + 'z'.repeat(1024 - 256) });
    const long = passwordStrength.output.parse(await passwordStrength.handler(input, testContext({ offload })));
    // The work is bounded by what the job is given: 256 characters, never the 1024 sent.
    expect(analysed).toEqual([head]);
    expect(long).toEqual(await call(head));
    expect(long.score).toBe(4);
  });

  it('is deterministic', async () => {
    expect(await call('Tr0ub4dour&3')).toEqual(await call('Tr0ub4dour&3'));
  });
});
