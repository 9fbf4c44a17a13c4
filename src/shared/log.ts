import pino, { type DestinationStream } from 'pino';

/** Minimal structured logger interface; every implementation writes to stderr. */
export interface Logger {
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

/** The levels LOG_LEVEL accepts. */
export type LogLevel = 'info' | 'warn' | 'error' | 'silent';

/** Field names (any case, any depth) whose values are never written: keys, passwords, tokens, card numbers, payments, inputs. */
export const SECRET_FIELDS: ReadonlySet<string> = new Set(
  [
    'password',
    'passphrase',
    'privateKey',
    'secretKey',
    'secret',
    'secrets',
    'mnemonic',
    'seed',
    'apiKey',
    'apiKeySecret',
    'smmPanelKey',
    'keys',
    'accessToken',
    'bearerToken',
    'jwt',
    'metricsToken',
    'authorization',
    'cookie',
    'cardNumber',
    'card',
    'databaseUrl',
    'connectionString',
    'DATABASE_URL',
    'env',
    // A signed payment is a bearer instrument until settled; a call's input may carry a password or a card number.
    'payment',
    'paymentPayload',
    'payload',
    'payment-signature',
    'x-payment',
    'input',
    'arguments',
  ].map((k) => k.toLowerCase()),
);

const CENSORED = '[redacted]';
const MAX_DEPTH = 6;

/** A copy of `value` with every secret-named field censored (objects and arrays are copied only where something changed). */
export function censorSecrets(value: unknown, depth = 0): unknown {
  if (value === null || typeof value !== 'object' || depth > MAX_DEPTH) return value;
  if (Array.isArray(value)) {
    const items = value.map((item) => censorSecrets(item, depth + 1));
    return items.some((item, i) => item !== value[i]) ? items : value;
  }
  if (value instanceof Error) return value;
  let copy: Record<string, unknown> | undefined;
  for (const [key, field] of Object.entries(value)) {
    const censored = SECRET_FIELDS.has(key.toLowerCase()) ? CENSORED : censorSecrets(field, depth + 1);
    if (censored !== field) (copy ??= { ...(value as Record<string, unknown>) })[key] = censored;
  }
  return copy ?? value;
}

/** Hides the password of any `scheme://user:password@host` URL a message or error text may carry (e.g. DATABASE_URL). */
export function scrubUrlCredentials(line: string): string {
  return line.replace(/(\/\/[^\s:@/"'\\]+:)[^\s@/"'\\]+@/g, '$1[redacted]@');
}

/**
 * Creates a pino JSON-lines logger on stderr (fd 2; stdout is the MCP stdio channel): level label and ISO time on
 * every line, secret-named fields censored at any depth, URL passwords scrubbed. `destination` replaces stderr (tests).
 */
export function createLogger(level: LogLevel = 'info', destination?: DestinationStream): Logger {
  const logger = pino(
    {
      level,
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: {
        level: (label) => ({ level: label }),
        log: (fields) => censorSecrets(fields) as Record<string, unknown>,
      },
      hooks: { streamWrite: scrubUrlCredentials },
    },
    destination ?? pino.destination({ dest: 2, sync: true }),
  );
  return {
    info: (msg, fields) => (fields ? logger.info(fields, msg) : logger.info(msg)),
    warn: (msg, fields) => (fields ? logger.warn(fields, msg) : logger.warn(msg)),
    error: (msg, fields) => (fields ? logger.error(fields, msg) : logger.error(msg)),
  };
}

/** A logger that drops everything (tests). */
export const silentLogger: Logger = { info() {}, warn() {}, error() {} };
