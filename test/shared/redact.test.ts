import { describe, expect, it } from 'vitest';
import { redactingLogger, Redactor, urlSecrets, variableSecrets } from '../../src/shared/redact.js';

/** A 64-byte key (a Solana or Algorand secret key) whose bytes are all above 0. */
const KEY = Uint8Array.from({ length: 64 }, (_, i) => (i * 37 + 11) % 255 || 1);
const bytes = Buffer.from(KEY);
const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

/** Base58 written the long way (repeated division of a big integer), independent of the module's encoder. */
function base58(data: Uint8Array): string {
  let n = BigInt(`0x${Buffer.from(data).toString('hex')}`);
  let out = '';
  while (n > 0n) {
    out = BASE58[Number(n % 58n)]! + out;
    n /= 58n;
  }
  return out;
}

describe('the shared redactor on a key given as bytes', () => {
  const redactor = new Redactor([KEY]);
  const cases: Array<[string, string]> = [
    ['hex', bytes.toString('hex')],
    ['hex in upper case', bytes.toString('hex').toUpperCase()],
    ['hex byte by byte, as a Buffer is inspected', Array.from(KEY, (b) => b.toString(16).padStart(2, '0')).join(' ')],
    ['base64', bytes.toString('base64')],
    [
      'base64url after one byte',
      Buffer.concat([Buffer.from([7]), bytes])
        .toString('base64url')
        .slice(2),
    ],
    ['base58', base58(KEY)],
    ['a JSON byte array (a solana-keygen file)', JSON.stringify(Array.from(KEY))],
    ['a spaced byte list, as a Uint8Array is inspected', Array.from(KEY).join(', ')],
    ['a prefix of 12 characters of its base58', base58(KEY).slice(0, 12)],
  ];
  for (const [label, form] of cases) {
    it(`blanks it echoed as ${label}`, () => {
      const out = redactor.redact(`the library said: ${form}.`);
      expect(out).toContain('[redacted]');
      expect(out).not.toContain(form.slice(0, 8));
      expect(out.startsWith('the library said: ')).toBe(true);
    });
  }

  it('ignores byte secrets too short to be a key, and leaves other text alone', () => {
    const text = 'paid 0.001 USDC to 0x1234 (base64 AAEC, bytes 1,2,3)';
    expect(new Redactor([Uint8Array.from([1, 2, 3])]).redact(text)).toBe(text);
    expect(redactor.redact(text)).toBe(text);
  });

  it('blanks text and byte secrets together in every string of a log line', () => {
    const written: unknown[] = [];
    const sink = { info() {}, warn: (...a: unknown[]) => written.push(a), error() {} };
    const both = new Redactor(['a-configured-api-token-1234', KEY]);
    redactingLogger(sink, both).warn(`key ${base58(KEY)}`, { nested: { token: 'a-configured-api-token-1234' } });
    expect(JSON.stringify(written)).not.toContain(base58(KEY).slice(0, 8));
    expect(JSON.stringify(written)).not.toContain('a-configured');
    expect(written).toEqual([['key [redacted]', { nested: { token: '[redacted]' } }]]);
  });
});

describe('the shared redactor on a mnemonic', () => {
  const words = ['abandon', 'ability', 'able', 'about', 'above', 'absent', 'absorb', 'abstract'];
  const redactor = new Redactor([{ words }]);

  it('blanks its words however they are separated, whole or from its start, and leaves other words alone', () => {
    expect(redactor.redact(`got ${words.join(' ')} back`)).toBe('got [redacted] back');
    expect(redactor.redact(`got ${words.join('\n  ')}.`)).toBe('got [redacted].');
    expect(redactor.redact(`got ${JSON.stringify(words.join('\n'))}`)).toBe('got "[redacted]"');
    expect(redactor.redact(`got ${JSON.stringify(words)}`)).toBe('got ["[redacted]"]');
    expect(redactor.redact('it began ABANDON, Ability, able and then')).toBe('it began [redacted] and then');
    expect(redactor.redact('he was able to abandon it')).toBe('he was able to abandon it');
  });
});

describe('the credentials of one variable', () => {
  it('are the value of a secret-named one, the secret parts of a URL one, and nothing of the others', () => {
    expect(variableSecrets('WALLET_ALGORAND_MNEMONIC', 'abandon ability')).toEqual(['abandon ability']);
    expect(variableSecrets('WALLET_EVM_PRIVATE_KEY', '0xabc')).toEqual(['0xabc']);
    expect(variableSecrets('REMOTE_URL', 'https://u:pw-123@host/x?token=0123456789abcdef0')).toEqual([
      'pw-123',
      '0123456789abcdef0',
    ]);
    expect(variableSecrets('LOG_LEVEL', 'info')).toEqual([]);
    expect(urlSecrets('https://rpc.example/v3/an-api-key-in-the-path-0001')).toEqual(['an-api-key-in-the-path-0001']);
  });
});

describe('the shared redactor on short values and mixed case', () => {
  it('blanks a secret of 6 characters in a value exactly that long, and leaves shorter values alone', () => {
    const r = new Redactor(['Zq9!x7']);
    expect(r.redact('Zq9!x7')).toBe('[redacted]');
    expect(r.redact('Zq9!x')).toBe('Zq9!x');
    expect(r.deep({ a: 'Zq9!x7', b: 'ok', c: 7 })).toEqual({ a: '[redacted]', b: 'ok', c: 7 });
  });

  it('blanks a hex key in any case after an earlier form changed the same text', () => {
    const hex = 'ab'.repeat(32);
    const r = new Redactor(['a-configured-api-token-1234', `0x${hex}`]);
    const text = `token a-configured-api-token-1234 then key ${hex.toUpperCase()} and 0x${hex}`;
    expect(r.redact(text)).toBe('token [redacted] then key [redacted] and [redacted]');
  });
});
