/**
 * What `tollbooth config` shows: every setting of the grouped list (src/shared/setting-groups.ts) with the value in
 * effect and where it came from (a command-line flag, the environment, a `<NAME>_FILE` file, or the default), and
 * every problem of the configuration at once. Nothing is started: the same checks as a start (both schemas, the
 * server's and the agent's settings, the production refusals) run on the environment, and a problem found in one
 * variable does not hide the problems of the others. Credentials are never part of the report.
 */
import { AgentEnvSchema, loadAgentConfig } from '../agent/settings.js';
import { loadConfig, type Config } from '../config/config.js';
import { EnvSchema } from '../config/env.js';
import { unsettledFamilies } from '../payments/facilitators/facilitator-support.js';
import { mppSettings, mppStartProblem } from '../payments/mpp/settings.js';
import { payToVariable } from '../payments/reading/pay-to.js';
import { configuredSecrets } from '../config/redact.js';
import { ConfigError, readSecretFiles } from '../shared/env.js';
import { describeLookalikes } from '../shared/env-names.js';
import { allSettings, type Setting } from '../shared/setting-groups.js';
import { unknownVariables } from './env-check.js';

/** Where a value in effect came from. */
export type SettingSource =
  | { kind: 'default' }
  | { kind: 'env'; variable: string }
  | { kind: 'file'; variable: string; path: string }
  | { kind: 'flag'; flag: string };

/** One setting as `tollbooth config` shows it; `value` is what may be shown (credentials never are). */
export interface ReportedSetting {
  name: string;
  group: string;
  side: Setting['side'];
  value: string;
  source: SettingSource;
}

/** One problem of the configuration: the variable it is about (when one is named) and what is wrong. */
export interface ConfigProblem {
  variable?: string;
  message: string;
}

/** The effective configuration, its problems (any refuses a start) and its warnings (a start goes ahead). */
export interface ConfigReport {
  settings: ReportedSetting[];
  problems: ConfigProblem[];
  warnings: ConfigProblem[];
  /** The values that are credentials (after `<NAME>_FILE` was read), to blank out of anything printed. */
  secrets: string[];
}

const MARK = '[redacted]';
const CREDENTIAL_PARAM = /pass|secret|token|key|auth|sig|cred/i;

/** A URL with its password, credential-like query values and long path segments (API keys) blanked. */
function shownUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return '[not a URL; not shown]';
  }
  const user = url.username ? `${url.username}${url.password ? `:${MARK}` : ''}@` : url.password ? `:${MARK}@` : '';
  const path = url.pathname
    .split('/')
    .map((segment) => (segment.length >= 20 ? MARK : segment))
    .join('/');
  const query = [...url.searchParams]
    .map(([k, v]) => `${k}=${CREDENTIAL_PARAM.test(k) || v.length >= 16 ? MARK : encodeURIComponent(v)}`)
    .join('&');
  return `${url.protocol}//${user}${url.host}${path === '/' && !value.endsWith('/') ? '' : path}${query ? `?${query}` : ''}`;
}

/** The value of one set variable as it may be shown. */
function shownValue(setting: Setting, value: string): string {
  if (setting.show === 'secret') return `${MARK} (set)`;
  if (setting.show === 'opaque') return '[set; JSON not shown, it may hold keys]';
  if (setting.show === 'url') return value.split(',').map(shownUrl).join(',');
  return value;
}

/** Each variable's `<NAME>_FILE` read one at a time, so an unreadable file is one problem and the others still read. */
function readFiles(env: NodeJS.ProcessEnv, names: readonly string[], problems: ConfigProblem[]): NodeJS.ProcessEnv {
  let out = { ...env };
  for (const name of names) {
    try {
      out = readSecretFiles(out, [name]);
    } catch (err) {
      problems.push({ variable: `${name}_FILE`, message: (err as Error).message });
      delete out[`${name}_FILE`];
    }
  }
  return out;
}

/** The schema problems of both sides, one per variable and message. */
function schemaProblems(env: NodeJS.ProcessEnv): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  for (const schema of [EnvSchema, AgentEnvSchema]) {
    const parsed = schema.safeParse(env);
    if (parsed.success) continue;
    for (const issue of parsed.error.issues) problems.push({ variable: String(issue.path[0]), message: issue.message });
  }
  return problems;
}

const NAME = /\b[A-Z][A-Z0-9_]{2,}\b/g;

/** The known variables a message names, in the order it names them (a network table problem names its variables). */
function namedIn(message: string, known: ReadonlySet<string>): string[] {
  const names = [...message.matchAll(NAME)].map((m) => m[0]).filter((n) => known.has(n));
  if (/network table/i.test(message)) names.push('NETWORKS_FILE', 'NETWORKS_JSON');
  return names;
}

/**
 * Runs `load` until it passes: each ConfigError is a problem, and the first set variable it names (never NODE_ENV,
 * which changes what the other checks ask) is taken out before the next round, so the problems after it are found too.
 */
function checkedRounds(load: (env: NodeJS.ProcessEnv) => void, start: NodeJS.ProcessEnv, known: ReadonlySet<string>) {
  const problems: ConfigProblem[] = [];
  const env = { ...start };
  const removed = new Set<string>();
  for (let round = 0; round <= known.size; round++) {
    try {
      load(env);
      break;
    } catch (err) {
      const text = String((err as Error)?.message ?? err).replace(/^Invalid configuration:\s*/, '');
      for (const line of text.split('\n').filter((l) => l.trim() !== '')) {
        const named = namedIn(line, known);
        // A problem about a variable taken out in an earlier round is that round's consequence, not a new one.
        if (named.some((n) => removed.has(n))) continue;
        const variable = named.find((n) => n !== 'NODE_ENV') ?? named[0];
        problems.push({ ...(variable ? { variable } : {}), message: line });
      }
      if (!(err instanceof ConfigError)) break;
      const culprit = namedIn(text, known).find((n) => n !== 'NODE_ENV' && env[n] !== undefined && env[n] !== '');
      if (!culprit) break;
      removed.add(culprit);
      delete env[culprit];
      delete env[`${culprit}_FILE`];
    }
  }
  return problems;
}

/** The server's start checks that need no network: its configuration, then the MPP key production asks for. */
function serverLoader(loaded: { config?: Config }): (env: NodeJS.ProcessEnv) => void {
  return (env) => {
    const config = loadConfig(env);
    loaded.config ??= config;
    const problem = mppStartProblem(config.mpp);
    if (problem) throw new ConfigError(problem);
  };
}

/** The MPP key production asks for, checked on its own (a refused pay-to address stops the configuration before it). */
function mppProblem(env: NodeJS.ProcessEnv): ConfigProblem[] {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) return [];
  try {
    const problem = mppStartProblem(
      mppSettings(parsed.data, parsed.data.NODE_ENV === 'production', 'http://localhost'),
    );
    return problem ? [{ variable: 'MPP_SECRET_KEY', message: problem }] : [];
  } catch {
    return []; // a key too short: the rounds said so
  }
}

/** What a start would warn about: payments shown on placeholder addresses, or families nothing can settle. */
function startWarnings(config: Config | undefined): ConfigProblem[] {
  if (!config) return [];
  const warnings = config.devPayTo.map((family) => ({
    variable: payToVariable(family),
    message: `${payToVariable(family)} is not set: prices are shown on a development placeholder address, and no payment can settle`,
  }));
  for (const family of unsettledFamilies(config).filter((f) => !config.devPayTo.includes(f)))
    warnings.push({
      variable: 'FACILITATOR_URL',
      message: `no facilitator or settlement key for ${family}: its prices are shown, but no payment on it can settle`,
    });
  return warnings;
}

/** Where each set variable's value came from: a flag (given as the variable it stands for), the environment or a file. */
function sourceOf(name: string, env: NodeJS.ProcessEnv, flags: Readonly<Record<string, string>>): SettingSource {
  if (flags[name]) return { kind: 'flag', flag: flags[name] };
  if (env[name] !== undefined && env[name] !== '') return { kind: 'env', variable: name };
  const file = env[`${name}_FILE`];
  if (file && name !== 'NETWORKS_JSON') return { kind: 'file', variable: `${name}_FILE`, path: file };
  return { kind: 'default' };
}

/** Problems said once each (both sides read the shared settings). */
function unique(problems: ConfigProblem[]): ConfigProblem[] {
  const seen = new Set<string>();
  return problems.filter((p) => !seen.has(p.message) && seen.add(p.message));
}

/**
 * The report of `env` (the process environment with the flags' settings applied); `flags` names, per variable, the
 * flag that set it. Never throws for a configuration problem: it is in `problems`.
 */
export function configReport(env: NodeJS.ProcessEnv, flags: Readonly<Record<string, string>> = {}): ConfigReport {
  const all = allSettings();
  const names = all.map((s) => s.name);
  const known = new Set(names);
  const problems: ConfigProblem[] = [];
  const resolved = readFiles(env, names, problems);
  const invalid = schemaProblems(resolved);
  problems.push(...invalid);
  // A variable the schema refused is left at its default, so the checks after the schema still run on the others.
  const valid = { ...resolved };
  for (const { variable } of invalid) if (variable) delete valid[variable];
  const loaded: { config?: Config } = {};
  problems.push(...checkedRounds(serverLoader(loaded), valid, known), ...checkedRounds(loadAgentConfig, valid, known));
  problems.push(...mppProblem(valid));
  const lookalikes = unknownVariables(env);
  const lookalikeProblems = lookalikes.map((l) => ({
    variable: l.name,
    message: `unknown variable that looks like a Tollbooth setting: ${describeLookalikes([l])}; correct or unset it, or list it in TOLLBOOTH_FOREIGN_ENV`,
  }));
  const production = resolved.NODE_ENV === 'production';
  const settings = all.map((setting) => {
    const value = resolved[setting.name];
    const source = sourceOf(setting.name, env, flags);
    const set = source.kind !== 'default' && value !== undefined && value !== '';
    return {
      name: setting.name,
      group: setting.group,
      side: setting.side,
      value: set ? shownValue(setting, value) : setting.default,
      source: set ? source : { kind: 'default' as const },
    };
  });
  return {
    settings,
    problems: unique([...problems, ...(production ? lookalikeProblems : [])]),
    warnings: [...(production ? [] : lookalikeProblems), ...startWarnings(loaded.config)],
    secrets: credentials(all, resolved),
  };
}

/** The credentials among the settings: every secret value whole, and the secret parts of URLs (also inside JSON). */
function credentials(all: readonly Setting[], resolved: NodeJS.ProcessEnv): string[] {
  const out = configuredSecrets(Object.fromEntries(all.map((s) => [s.name, resolved[s.name]])));
  for (const setting of all) {
    const value = resolved[setting.name];
    if (!value) continue;
    if (setting.show === 'secret') out.push(value);
    if (setting.show === 'opaque')
      out.push(...configuredSecrets({ IN_JSON_URLS: value.match(/https?:\/\/[^\s"',]+/g)?.join(' ') }));
  }
  return out;
}
