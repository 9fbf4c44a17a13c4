import { parseArgs, type ParseArgsConfig } from 'node:util';
import type { z } from 'zod';

/** Options of a command, in `node:util` `parseArgs` form. */
export type CommandOptions = NonNullable<ParseArgsConfig['options']>;

/** The option values `parseArgs` reads. */
export type OptionValues = Record<string, string | boolean | undefined>;

/** Parsed command line of one command: its option values (checked by its `values` schema when it has one). */
export interface CommandArgs<V = OptionValues> {
  values: V;
  positionals: string[];
}

/** One `tollbooth <command>`: its help text, its options, and what it does (returns the exit code). */
export interface CliCommand<V = OptionValues> {
  /** The full `--help` text. */
  usage: string;
  options: CommandOptions;
  /** Checks and converts the option values; the message of the first failing check is the usage error. */
  values?: z.ZodType<V>;
  /** How many positional arguments it takes (default none). */
  positionals?: number;
  run(args: CommandArgs<V>): Promise<number | undefined>;
}

/** A wrong command line: the message is printed with the command's usage, exit code 2. */
export class UsageError extends Error {}

/** Exit code of a wrong command line. */
export const USAGE_EXIT = 2;

/**
 * Parses a command's arguments strictly with `node:util` `parseArgs`, then checks the values with the command's
 * schema: an unknown option, a missing or wrong value or an extra argument is a UsageError (never silently ignored);
 * `--help`/`-h` is recognised on every command.
 */
export function parseCommandArgs<V>(command: CliCommand<V>, argv: readonly string[]): CommandArgs<V> | 'help' {
  if (argv.includes('--help') || argv.includes('-h')) return 'help';
  let parsed: CommandArgs;
  try {
    const { values, positionals } = parseArgs({
      args: [...argv],
      options: command.options,
      strict: true,
      allowPositionals: true,
    });
    parsed = { values: values as OptionValues, positionals };
  } catch (err) {
    // node:util's messages name the option ("Unknown option '--port'", "Option '--limit <value>' argument missing").
    throw new UsageError(String((err as Error).message).replace(/\. To specify a positional argument.*$/s, '.'));
  }
  const { positionals } = parsed;
  if (positionals.length > (command.positionals ?? 0))
    throw new UsageError(`unexpected argument "${positionals[command.positionals ?? 0]}"`);
  if (!command.values) return parsed as CommandArgs<V>;
  const checked = command.values.safeParse(parsed.values);
  if (!checked.success) throw new UsageError(checked.error.issues.map((i) => i.message).join('; '));
  return { values: checked.data, positionals };
}

/** A string option's value, or undefined. */
export function stringOption(args: CommandArgs, name: string): string | undefined {
  const value = args.values[name];
  return typeof value === 'string' ? value : undefined;
}
