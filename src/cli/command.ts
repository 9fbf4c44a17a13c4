import { parseArgs, type ParseArgsConfig } from 'node:util';

/** Options of a command, in `node:util` `parseArgs` form. */
export type CommandOptions = NonNullable<ParseArgsConfig['options']>;

/** Parsed command line of one command. */
export interface CommandArgs {
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
}

/** One `tollbooth <command>`: its help text, its options, and what it does (returns the exit code). */
export interface CliCommand {
  /** The full `--help` text. */
  usage: string;
  options: CommandOptions;
  /** How many positional arguments it takes (default none). */
  positionals?: number;
  run(args: CommandArgs): Promise<number | undefined>;
}

/** A wrong command line: the message is printed with the command's usage, exit code 2. */
export class UsageError extends Error {}

/** Exit code of a wrong command line. */
export const USAGE_EXIT = 2;

/**
 * Parses a command's arguments strictly: an unknown option, a missing value or an extra argument is a UsageError
 * (never silently ignored); `--help`/`-h` is recognised on every command.
 */
export function parseCommandArgs(command: CliCommand, argv: readonly string[]): CommandArgs | 'help' {
  if (argv.includes('--help') || argv.includes('-h')) return 'help';
  try {
    const { values, positionals } = parseArgs({
      args: [...argv],
      options: command.options,
      strict: true,
      allowPositionals: true,
    });
    if (positionals.length > (command.positionals ?? 0))
      throw new UsageError(`unexpected argument "${positionals[command.positionals ?? 0]}"`);
    return { values: values as CommandArgs['values'], positionals };
  } catch (err) {
    if (err instanceof UsageError) throw err;
    // node:util's messages name the option ("Unknown option '--port'", "Option '--limit <value>' argument missing").
    throw new UsageError(String((err as Error).message).replace(/\. To specify a positional argument.*$/s, '.'));
  }
}

/** A string option's value, or undefined. */
export function stringOption(args: CommandArgs, name: string): string | undefined {
  const value = args.values[name];
  return typeof value === 'string' ? value : undefined;
}
