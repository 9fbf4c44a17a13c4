import { UsageError, type CommandOptions } from './command.js';

/** The `--remote…` options of `stdio` and `call`, and the setting each one stands for. */
export const REMOTE_FLAGS = {
  remote: 'REMOTE_URL',
  'remote-tools': 'REMOTE_URL_TOOLS',
  'remote-token': 'REMOTE_URL_TOKEN',
  'remote-smm': 'REMOTE_URL_SMM',
  'remote-transfers': 'REMOTE_URL_TRANSFERS',
} as const;

/** The `--remote…` options in `parseArgs` form (`--remote` may be repeated). */
export const REMOTE_OPTIONS: CommandOptions = Object.fromEntries(
  Object.keys(REMOTE_FLAGS).map((flag) => [
    flag,
    flag === 'remote' ? { type: 'string', multiple: true } : { type: 'string' },
  ]),
);

/** The help lines of the `--remote…` options. */
export const REMOTE_USAGE = `  --remote [<prefix>=]<url> a remote to call (REMOTE_URL); repeatable with stdio, each remote's tools named
                           <prefix>_<tool> when a prefix is given; the four groups below default to the first
  --remote-tools <url>     base URL of the tools group (REMOTE_URL_TOOLS)
  --remote-token <url>     base URL of token-report (REMOTE_URL_TOKEN)
  --remote-smm <url>       base URL of the smm tools (REMOTE_URL_SMM)
  --remote-transfers <url> base URL of transfers-evm (REMOTE_URL_TRANSFERS)`;

/** One `--remote` value: `<prefix>=<url>` or a bare URL. */
export interface RemoteFlag {
  url: string;
  prefix?: string;
}

/** A prefix before `=`: 1 to 32 letters, digits, `_` or `-`, starting with a letter (a URL's scheme never has `=`). */
const PREFIXED = /^([A-Za-z][A-Za-z0-9_-]{0,31})=(.+)$/;

/** Reads one `--remote` value (`weather=https://a.example` or `https://a.example`); refuses one that is not an http(s) URL. */
export function parseRemoteFlag(value: string): RemoteFlag {
  const match = PREFIXED.exec(value);
  const flag = match ? { prefix: match[1]!, url: match[2]! } : { url: value };
  const protocol = URL.canParse(flag.url) ? new URL(flag.url).protocol : '';
  if (protocol !== 'http:' && protocol !== 'https:')
    throw new UsageError('--remote takes [<prefix>=]<url>, the URL with http:// or https://');
  return flag;
}

/** The `--remote` values given, in order (none: an empty list). */
export function remoteFlags(values: Readonly<Record<string, unknown>>): RemoteFlag[] {
  const given = values.remote;
  const list = Array.isArray(given) ? given : typeof given === 'string' ? [given] : [];
  return list.filter((v): v is string => typeof v === 'string').map(parseRemoteFlag);
}

/** The settings the given `--remote…` options set (they override the environment); REMOTE_URL is the first `--remote`'s URL. */
export function remoteSettings(values: Readonly<Record<string, unknown>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [flag, setting] of Object.entries(REMOTE_FLAGS)) {
    const value = flag === 'remote' ? remoteFlags(values)[0]?.url : values[flag];
    if (typeof value === 'string') out[setting] = value;
  }
  return out;
}
