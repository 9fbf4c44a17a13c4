/** Minimal structured logger interface; every implementation writes to stderr. */
export interface Logger {
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

type Level = 'info' | 'warn' | 'error' | 'silent';
const RANK: Record<Level, number> = { info: 0, warn: 1, error: 2, silent: 3 };

/** Creates a JSON-lines logger on stderr (stdout is the MCP stdio channel). */
export function createLogger(level: Level = 'info'): Logger {
  const write = (lvl: Exclude<Level, 'silent'>, msg: string, fields?: Record<string, unknown>) => {
    if (RANK[lvl] < RANK[level]) return;
    const line = JSON.stringify({ level: lvl, time: new Date().toISOString(), msg, ...fields });
    process.stderr.write(line + '\n');
  };
  return {
    info: (m, f) => write('info', m, f),
    warn: (m, f) => write('warn', m, f),
    error: (m, f) => write('error', m, f),
  };
}

/** A logger that drops everything (tests). */
export const silentLogger: Logger = { info() {}, warn() {}, error() {} };
