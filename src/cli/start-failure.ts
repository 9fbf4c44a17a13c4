/**
 * How a refused start reads: a configuration that cannot start is listed whole (every problem at once, one line each
 * naming its variable, as `tollbooth config --check` lists it), and a port already in use names PORT and --port.
 */
import { ConfigError } from '../config/config.js';

/** A start that cannot go ahead, said in readable lines on stderr (never a JSON log line) with its exit code. */
export class StartFailure extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

/** Exit code of a configuration that refuses a start (EX_CONFIG). */
export const CONFIG_EXIT = 78;

/** Exit code of a start whose port is taken (EX_UNAVAILABLE). */
export const PORT_IN_USE_EXIT = 69;

/** A ConfigError's own text as lines: zod's `✖ message\n  → at NAME` pairs become `  - NAME: message`. */
export function readableConfigMessage(message: string): string {
  const lines: string[] = [];
  for (const line of message.replace(/^Invalid configuration:\s*/, '').split('\n')) {
    const at = /^\s*\u2192 at (\S+)/.exec(line);
    const last = lines.length - 1;
    if (at && last >= 0) lines[last] = `  - ${at[1]}: ${lines[last]!.replace(/^\s*- /, '')}`;
    else if (line.trim() !== '') lines.push(`  - ${line.replace(/^\s*[\u2716-]\s*/, '')}`);
  }
  return lines.join('\n');
}

/**
 * Runs `load` (the configuration part of a start); a ConfigError becomes a StartFailure listing every problem of `env`
 * the way `tollbooth config --check` does (its own message when the report finds none).
 */
export async function listingConfigProblems<T>(command: string, env: NodeJS.ProcessEnv, load: () => T): Promise<T> {
  try {
    return load();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    const [{ configReport }, { problemLine }, { Redactor }] = await Promise.all([
      import('./config-report.js'),
      import('./config.js'),
      import('../shared/redact.js'),
    ]);
    const report = configReport(env);
    const lines = report.problems.length > 0 ? report.problems.map(problemLine) : [readableConfigMessage(err.message)];
    const count = Math.max(report.problems.length, 1);
    const text = [
      `tollbooth ${command} refused to start: ${count} configuration problem${count === 1 ? '' : 's'}:`,
      ...lines,
      'Fix them all, then start again (tollbooth config --check lists them without starting).',
    ].join('\n');
    throw new StartFailure(new Redactor(report.secrets).redact(text), CONFIG_EXIT);
  }
}

/** A listen error as a StartFailure: a port in use names the port, PORT and --port; any other error is rethrown. */
export function portFailure(err: unknown, port: number, host: string): never {
  const code = (err as NodeJS.ErrnoException)?.code;
  if (code === 'EADDRINUSE')
    throw new StartFailure(
      `tollbooth serve cannot listen on ${host}:${port}: port ${port} is already in use (EADDRINUSE). ` +
        `Stop what listens there, or choose another port with PORT=<n> or --port <n> (0 picks a free one).`,
      PORT_IN_USE_EXIT,
    );
  if (code === 'EACCES')
    throw new StartFailure(
      `tollbooth serve may not listen on ${host}:${port} (EACCES): ports below 1024 need privileges. ` +
        `Choose another port with PORT=<n> or --port <n>.`,
      PORT_IN_USE_EXIT,
    );
  throw err;
}
