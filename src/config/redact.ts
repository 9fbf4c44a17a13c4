/**
 * The server's credentials to redact, read from its environment (src/shared/redact.ts blanks them in every form): the
 * values of secret-named variables, FACILITATOR_HEADERS' header values, and the secret parts of URLs.
 */
import { variableSecrets } from '../shared/redact.js';

/** The credentials among the server's environment variables (after *_FILE was read): the values to redact. */
export function configuredSecrets(env: Readonly<Record<string, string | undefined>>): string[] {
  const out: string[] = [];
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
