import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/cli/command.js';
import { parseRemoteFlag, remoteFlags, remoteSettings } from '../../src/cli/remote-flags.js';

describe('the --remote flags', () => {
  it('reads a prefix before "=" and keeps a bare URL (an "=" in its query included) as it is', () => {
    expect(parseRemoteFlag('weather=https://a.example/mcp')).toEqual({
      prefix: 'weather',
      url: 'https://a.example/mcp',
    });
    expect(parseRemoteFlag('https://a.example/x?key=1')).toEqual({ url: 'https://a.example/x?key=1' });
  });

  it('refuses a value that is not an http(s) URL, without echoing it', () => {
    expect(() => parseRemoteFlag('weather=ftp://a.example')).toThrow(UsageError);
    expect(() => parseRemoteFlag('not a url secret123')).toThrow(/^--remote takes \[<prefix>=\]<url>/);
    expect(() => parseRemoteFlag('not a url secret123')).not.toThrow(/secret123/);
  });

  it('takes --remote repeated, in order, and sets REMOTE_URL to the first URL without its prefix', () => {
    const values = { remote: ['a=http://127.0.0.1:1', 'http://127.0.0.1:2'], 'remote-smm': 'http://127.0.0.1:3' };
    expect(remoteFlags(values)).toEqual([{ prefix: 'a', url: 'http://127.0.0.1:1' }, { url: 'http://127.0.0.1:2' }]);
    expect(remoteSettings(values)).toEqual({ REMOTE_URL: 'http://127.0.0.1:1', REMOTE_URL_SMM: 'http://127.0.0.1:3' });
    expect(remoteFlags({})).toEqual([]);
  });
});
