import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createLogger, scrubUrlCredentials, type LogLevel } from '../../src/shared/log.js';

function capture(level: LogLevel = 'info') {
  const lines: string[] = [];
  const log = createLogger(level, { write: (line: string) => void lines.push(line) });
  return { log, lines, parsed: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

describe('the logger', () => {
  it('writes one JSON line per entry with the level name, an ISO time, the pid, the message and the fields', () => {
    const { log, lines, parsed } = capture();
    log.info('paid call', { tool: 'annuity', outcome: 'settled', verifyMs: 12.5 });
    log.warn('plain');
    expect(lines).toHaveLength(2);
    expect(lines.every((l) => l.endsWith('\n') && !l.slice(0, -1).includes('\n'))).toBe(true);
    const [first, second] = parsed();
    expect(first).toMatchObject({
      level: 'info',
      pid: process.pid,
      msg: 'paid call',
      tool: 'annuity',
      outcome: 'settled',
      verifyMs: 12.5,
    });
    expect(new Date(String(first!.time)).toISOString()).toBe(first!.time);
    expect(second).toMatchObject({ level: 'warn', msg: 'plain' });
  });

  it('drops entries below LOG_LEVEL, and everything when silent', () => {
    const warn = capture('warn');
    warn.log.info('dropped');
    warn.log.warn('kept');
    warn.log.error('kept too');
    expect(warn.parsed().map((l) => l.level)).toEqual(['warn', 'error']);
    const silent = capture('silent');
    silent.log.error('dropped');
    expect(silent.lines).toEqual([]);
  });

  it('censors secret-named fields wherever they sit, in any case, in nested objects and arrays', () => {
    const { log, lines, parsed } = capture();
    log.error('oops', {
      password: 'hunter2-password',
      privateKey: '0xprivate',
      request: {
        headers: { authorization: 'Bearer sekrit-token', 'payment-signature': 'eyJzaWduZWQ' },
        input: { number: '4111111111111111' },
      },
      a: { b: { mnemonic: 'abandon abandon ability', DATABASE_URL: 'postgres://u:pw@h/db' } },
      deep: { one: { two: { three: { four: [{ PrivateKey: 'deep-nested-key' }] } } } },
      tool: 'card-validate',
    });
    const text = lines.join('');
    for (const secret of [
      'hunter2-password',
      '0xprivate',
      'sekrit-token',
      'eyJzaWduZWQ',
      '4111111111111111',
      'abandon abandon',
      'postgres://u:pw@h/db',
      'deep-nested-key',
    ]) {
      expect(text).not.toContain(secret);
    }
    expect(parsed()[0]).toMatchObject({
      password: '[redacted]',
      request: { headers: { authorization: '[redacted]' }, input: '[redacted]' },
      tool: 'card-validate',
    });
    expect(parsed()[0]!.deep).toEqual({ one: { two: { three: { four: [{ PrivateKey: '[redacted]' }] } } } });
  });

  it('hides the password of a connection URL inside a message or a field', () => {
    const { log, lines } = capture();
    log.error('could not connect to postgres://tollbooth:S3cr3t-pw@db.internal:5432/prod', {
      error: 'dial postgresql://u:p%40ss@10.0.0.1/x failed',
    });
    const text = lines.join('');
    expect(text).not.toContain('S3cr3t-pw');
    expect(text).not.toContain('p%40ss');
    expect(text).toContain('postgres://tollbooth:[redacted]@db.internal:5432/prod');
    expect(scrubUrlCredentials('https://example.com/a:b@c')).toBe('https://example.com/a:b@c');
  });

  it('writes to stderr and never to stdout (stdout is the MCP stdio channel)', () => {
    const built = fileURLToPath(new URL('../../dist/src/shared/log.js', import.meta.url));
    const run = spawnSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import { createLogger } from ${JSON.stringify(built)}; createLogger().info('to stderr', { n: 1 });`,
      ],
      { encoding: 'utf8' },
    );
    expect(run.status).toBe(0);
    expect(run.stdout).toBe('');
    expect(JSON.parse(run.stderr)).toMatchObject({ level: 'info', msg: 'to stderr', n: 1 });
  });
});
