import { describe, expect, it } from 'vitest';
import { configuredSecrets } from '../../src/config/redact.js';
import { loadConfig } from '../../src/config/config.js';
import { redactingLogger, Redactor } from '../../src/shared/redact.js';

const SECRET = 'sk_live-Zq81/x+7Kp3mVa9Rt2Lw';
const redactor = new Redactor([SECRET, 'Basic dTdLcTpQYTU1d29yZC1vZi10aGUtcGFuZWw=']);
const b64 = (text: string) => Buffer.from(text).toString('base64');

describe('the redactor', () => {
  const cases: Array<[string, string]> = [
    ['raw', SECRET],
    ['base64', b64(SECRET)],
    ['base64url', Buffer.from(SECRET).toString('base64url')],
    ['base64 after one byte', b64(`:${SECRET}`).slice(2)],
    ['base64 after two bytes, inside Basic', b64(`u:${SECRET}`).slice(3)],
    ['hex, upper case', Buffer.from(SECRET).toString('hex').toUpperCase()],
    ['URL-encoded', encodeURIComponent(SECRET)],
    ['a prefix of 10 characters', SECRET.slice(0, 10)],
    ['a Basic credential without the word Basic', 'dTdLcTpQYTU1d29yZC1vZi10aGUtcGFuZWw='],
    ['the decoded password of a Basic credential', 'Pa55word-of-the-panel'],
  ];
  for (const [label, form] of cases) {
    it(`blanks a configured credential echoed as ${label}`, () => {
      const out = redactor.redact(`the facilitator said: ${form}.`);
      expect(out).toContain('[redacted]');
      expect(out).not.toContain(form.slice(0, 8));
      expect(out.startsWith('the facilitator said: ')).toBe(true);
    });
  }

  it('leaves text without a credential alone', () => {
    const text = 'The payment did not verify (invalid_exact_evm_signature) at 0x1234.';
    expect(redactor.redact(text)).toBe(text);
  });

  it('redacts every string of a log line, messages and fields at any depth', () => {
    const written: unknown[] = [];
    const sink = { info: (...a: unknown[]) => written.push(a), warn() {}, error() {} };
    redactingLogger(sink, redactor).info(`got ${b64(SECRET)}`, {
      nested: { list: [SECRET], error: new Error(SECRET) },
    });
    expect(JSON.stringify(written)).not.toContain(SECRET.slice(0, 8));
    expect(JSON.stringify(written)).not.toContain(b64(SECRET).slice(0, 8));
  });
});

describe('the configured credentials', () => {
  it('are the key, secret, token and header values and the secret parts of URLs, not the other settings', () => {
    const secrets = configuredSecrets({
      MPP_SECRET_KEY: 'mpp-secret-value-1234567890',
      CDP_API_KEY_ID: 'key-id-0123456789',
      METRICS_TOKEN: 'metrics-token-abcdef',
      FACILITATOR_HEADERS: JSON.stringify({ 'https://f.example': { authorization: 'Bearer abcdefghijkl' } }),
      RPC_URLS:
        'eip155:8453=https://base.example/v2/AbCdEfGhIjKlMnOpQrStUv,https://u:pw-123456@rpc.example/?key=qwertyuiopasdfgh',
      PORT: '4021',
      FACILITATOR_URL: 'https://f.example',
    });
    expect(secrets).toEqual(
      expect.arrayContaining([
        'mpp-secret-value-1234567890',
        'key-id-0123456789',
        'metrics-token-abcdef',
        'Bearer abcdefghijkl',
        'AbCdEfGhIjKlMnOpQrStUv',
        'pw-123456',
        'qwertyuiopasdfgh',
      ]),
    );
    expect(secrets).not.toContain('4021');
    expect(secrets.join(' ')).not.toContain('f.example');
  });

  it("include the key in the path of a network table entry's RPC URL (NETWORKS_JSON), so no log line shows it", () => {
    const key = 'AbCdEfGhIjKlMnOpQrStUvWx0123';
    const config = loadConfig({
      NETWORKS_JSON: JSON.stringify({
        networks: [{ id: 'eip155:8453', rpcUrl: `https://base-mainnet.rpc.example/v2/${key}` }],
      }),
    });
    expect(config.secrets).toContain(key);
    expect(config.secrets).not.toContain('v2');
  });
});
