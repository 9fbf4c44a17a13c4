/** Names a DATABASE_URL for logs and errors as `user@host:port/database`, never with its password. */
export function describeDatabaseUrl(url: string): string {
  try {
    const u = new URL(url);
    const user = u.username ? `${decodeURIComponent(u.username)}@` : '';
    const host = u.hostname || u.searchParams.get('host') || 'localhost';
    const database =
      decodeURIComponent(u.pathname.replace(/^\//, '')) || u.searchParams.get('dbname') || '(default database)';
    return `postgres://${user}${host}:${u.port || '5432'}/${database}`;
  } catch {
    return 'the DATABASE_URL (unparseable URL)';
  }
}

/** A function that blanks the URL's password (raw and decoded) and the URL itself out of any message. */
export function redactor(url: string): (message: string) => string {
  const secrets = new Set<string>([url]);
  try {
    const { password } = new URL(url);
    if (password) {
      secrets.add(password);
      secrets.add(decodeURIComponent(password));
    }
    const fromQuery = new URL(url).searchParams.get('password');
    if (fromQuery) secrets.add(fromQuery);
  } catch {
    // An unparseable URL is only ever shown as a whole, which is blanked below.
  }
  const ordered = [...secrets].filter(Boolean).sort((a, b) => b.length - a.length);
  return (message) => ordered.reduce((text, secret) => text.split(secret).join('***'), message);
}

const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'ETIMEDOUT',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
]);

/** True for errors that mean the database could not be reached or dropped the connection (not a bad statement). */
export function isConnectionError(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | undefined;
  const code = typeof e?.code === 'string' ? e.code : '';
  if (CONNECTION_CODES.has(code)) return true;
  // SQLSTATE classes 08 (connection exception), 28 (authorization), 57P (operator intervention: shutdown), 3D000 (no such database).
  if (/^(08|28|57P)/.test(code) || code === '3D000') return true;
  const message = typeof e?.message === 'string' ? e.message : '';
  return /Connection terminated|timeout exceeded when trying to connect|connect ECONNREFUSED|Client has encountered a connection error/i.test(
    message,
  );
}

/** An error's message, or what it is made of when the message is empty (Node's AggregateError for multi-address connects). */
export function errorText(err: unknown): string {
  const e = err as { message?: unknown; errors?: unknown; code?: unknown } | undefined;
  if (typeof e?.message === 'string' && e.message) return e.message;
  if (Array.isArray(e?.errors) && e.errors.length > 0) return e.errors.map(errorText).join('; ');
  if (typeof e?.code === 'string') return e.code;
  return String(err);
}
