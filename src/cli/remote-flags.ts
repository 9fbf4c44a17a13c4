import type { CommandOptions } from './command.js';

/** The `--remote…` options of `stdio` and `call`, and the setting each one stands for. */
export const REMOTE_FLAGS = {
  remote: 'REMOTE_URL',
  'remote-tools': 'REMOTE_URL_TOOLS',
  'remote-token': 'REMOTE_URL_TOKEN',
  'remote-smm': 'REMOTE_URL_SMM',
  'remote-transfers': 'REMOTE_URL_TRANSFERS',
} as const;

/** The `--remote…` options in `parseArgs` form. */
export const REMOTE_OPTIONS: CommandOptions = Object.fromEntries(
  Object.keys(REMOTE_FLAGS).map((flag) => [flag, { type: 'string' }]),
);

/** The help lines of the `--remote…` options. */
export const REMOTE_USAGE = `  --remote <base url>      the deployment to call (REMOTE_URL); the four groups below default to it
  --remote-tools <url>     base URL of the tools group (REMOTE_URL_TOOLS)
  --remote-token <url>     base URL of token-report (REMOTE_URL_TOKEN)
  --remote-smm <url>       base URL of the smm tools (REMOTE_URL_SMM)
  --remote-transfers <url> base URL of transfers-evm (REMOTE_URL_TRANSFERS)`;

/** The settings the given `--remote…` options set (they override the environment). */
export function remoteSettings(values: Readonly<Record<string, unknown>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [flag, setting] of Object.entries(REMOTE_FLAGS)) {
    const value = values[flag];
    if (typeof value === 'string') out[setting] = value;
  }
  return out;
}
