import type { CliCommand, CommandArgs } from './command.js';
import type { ConfigProblem, ConfigReport, SettingSource } from './config-report.js';
import { REMOTE_FLAGS, REMOTE_OPTIONS, remoteSettings } from './remote-flags.js';
import { TESTNET_OPTION, networkSetSettings } from './testnet-flag.js';

/** Exit code of a configuration that would refuse to start (EX_CONFIG, as `tollbooth serve` refuses it). */
const CONFIG_EXIT = 78;

/** `tollbooth config`: the effective configuration with each value's source, or (`--check`) only its problems. */
export const configCommand: CliCommand = {
  usage: `tollbooth config [--check] [--json] [--port <n>] [--host <address>] [--testnet] [--remote <base url>] ...

  Prints the effective configuration of the server and the agent side, by group (server, payments and each
  network family, facilitators, store, limits, upstreams, chain tools, agent): every setting's value and where it
  comes from: "flag --port", "env PORT", "file METRICS_TOKEN_FILE=<path>" or "default". Keys, passwords, tokens,
  mnemonics and URL credentials are never printed. Every problem is listed at once; nothing is started and no
  facilitator is asked (their /supported is compared at start-up).

  --check         validate only: "configuration is valid" and exit 0, or the list of problems and exit 78
  --json          one JSON object: { valid, problems, warnings, settings: [{ name, group, side, value,
                  source: { kind: default | env | file | flag, variable?, path?, flag? } }] }
  --port, --host, --testnet, --remote…   the flags of serve, stdio and call: shown as the values they would set

  Exit codes: 0 valid, 78 a problem that refuses a start (the same as tollbooth serve), 2 a wrong command line.`,
  options: {
    check: { type: 'boolean' },
    json: { type: 'boolean' },
    port: { type: 'string' },
    host: { type: 'string' },
    ...TESTNET_OPTION,
    ...REMOTE_OPTIONS,
  },
  async run(args) {
    const { env, flags } = flaggedEnv(args);
    const [{ configReport }, { Redactor }] = await Promise.all([
      import('./config-report.js'),
      import('../shared/redact.js'),
    ]);
    const report = configReport(env, flags);
    const check = args.values.check === true;
    const text = args.values.json === true ? jsonReport(report, check) : textReport(report, check);
    // A second guard: whatever a message may quote, no form of a configured credential is written.
    process.stdout.write(`${new Redactor(report.secrets).redact(text)}\n`);
    return report.problems.length > 0 ? CONFIG_EXIT : 0;
  },
};

/** The environment with the flags' settings applied, and per variable the flag that set it. */
function flaggedEnv(args: CommandArgs): { env: NodeJS.ProcessEnv; flags: Record<string, string> } {
  const flags: Record<string, string> = {};
  const set: Record<string, string> = {};
  for (const [flag, variable] of [
    ['port', 'PORT'],
    ['host', 'HOST'],
  ] as const) {
    const value = args.values[flag];
    if (typeof value === 'string') [set[variable], flags[variable]] = [value, `--${flag}`];
  }
  if (args.values.testnet === true) flags.TOLLBOOTH_NETWORK_SET = '--testnet';
  // `--remote` may be repeated (an array): REMOTE_URL is the first one's URL.
  for (const [flag, variable] of Object.entries(REMOTE_FLAGS))
    if (typeof args.values[flag] === 'string' || Array.isArray(args.values[flag])) flags[variable] = `--${flag}`;
  return { env: { ...process.env, ...set, ...networkSetSettings(args), ...remoteSettings(args.values) }, flags };
}

/** A source as one word or two: `default`, `env PORT`, `file NAME_FILE=<path>`, `flag --port`. */
function sourceText(source: SettingSource): string {
  switch (source.kind) {
    case 'default':
      return 'default';
    case 'env':
      return `env ${source.variable}`;
    case 'file':
      return `file ${source.variable}=${source.path}`;
    case 'flag':
      return `flag ${source.flag}`;
  }
}

/** One problem as a line naming its variable. */
export const problemLine = (p: ConfigProblem) =>
  `  - ${p.variable && !p.message.includes(p.variable) ? `${p.variable}: ` : ''}${p.message.replace(/^\u2716\s*/, '')}`;

/** The problems and warnings as readable lines (or the one line saying the configuration is valid). */
function verdict(report: ConfigReport): string[] {
  const lines: string[] = [];
  if (report.problems.length === 0)
    lines.push('configuration is valid (no facilitator was asked; that happens at start-up)');
  else lines.push(`${report.problems.length} configuration problem(s); tollbooth serve would refuse to start:`);
  lines.push(...report.problems.map(problemLine));
  if (report.warnings.length > 0) lines.push('warnings:', ...report.warnings.map(problemLine));
  return lines;
}

/** The settings by group, one aligned line each, then the verdict (only the verdict with --check). */
function textReport(report: ConfigReport, check: boolean): string {
  if (check) return verdict(report).join('\n');
  const width = Math.max(...report.settings.map((s) => s.name.length));
  const valueWidth = 44;
  const lines: string[] = ['Tollbooth configuration (value, then its source: flag, env, file or default)'];
  let group = '';
  for (const s of report.settings) {
    if (s.group !== group) lines.push('', `[${(group = s.group)}]${s.side === 'agent' ? ' (agent side)' : ''}`);
    const value = s.value.length > valueWidth ? s.value : s.value.padEnd(valueWidth);
    lines.push(`  ${s.name.padEnd(width)}  ${value}  ${sourceText(s.source)}`);
  }
  return [...lines, '', ...verdict(report)].join('\n');
}

/** The report as one JSON object (the settings left out with --check). */
function jsonReport(report: ConfigReport, check: boolean): string {
  return JSON.stringify(
    {
      valid: report.problems.length === 0,
      problems: report.problems,
      warnings: report.warnings,
      ...(check ? {} : { settings: report.settings }),
    },
    null,
    2,
  );
}
