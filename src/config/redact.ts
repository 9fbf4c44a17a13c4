/**
 * The server's credentials to redact, read from its environment (src/shared/redact.ts blanks them in every form): the
 * values of secret-named variables, FACILITATOR_HEADERS' header values, and the secret parts of URLs, the network
 * table's RPC URLs among them (NETWORKS_JSON or NETWORKS_FILE: a provider's key sits in their path or query).
 */
import type { NetworkEntry } from '../shared/networks.js';
import { urlSecrets, variableSecrets } from '../shared/redact.js';

/** The credentials among the server's environment variables (after *_FILE was read) and RPC URLs: the values to redact. */
export function configuredSecrets(
  env: Readonly<Record<string, string | undefined>>,
  networks: readonly Pick<NetworkEntry, 'rpcUrl'>[] = [],
): string[] {
  const out: string[] = networks.flatMap((n) => (n.rpcUrl ? urlSecrets(n.rpcUrl) : []));
  for (const [name, value] of Object.entries(env)) {
    if (!value) continue;
    if (name === 'FACILITATOR_HEADERS') out.push(...headerValues(value));
    else out.push(...variableSecrets(name, value));
  }
  return out;
}

function headerValues(json: string): string[] {
  try {
    const parsed = JSON.parse(json) as Record<string, Record<string, unknown>>;
    return Object.values(parsed).flatMap((h) =>
      Object.values(h ?? {}).filter((v): v is string => typeof v === 'string'),
    );
  } catch {
    return [json];
  }
}
