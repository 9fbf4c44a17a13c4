/**
 * The server's start-up check of environment variable names: a variable that looks like one of ours but is unknown
 * (`FACILITATOR_ULR`, `DATABSE_URL`) is named with the closest known name; with NODE_ENV=production the start is
 * refused. The known names are every key of the server's and the agent's schemas and their `<NAME>_FILE` forms (the
 * command line is the one place that sees both sides).
 */
import { AgentEnvSchema } from '../agent/settings.js';
import { ConfigError, loadConfig, type Config } from '../config/config.js';
import { EnvSchema } from '../config/env.js';
import type { Logger } from '../shared/log.js';
import { list } from '../shared/env.js';
import { describeLookalikes, lookalikeVariables, type Lookalike } from '../shared/env-names.js';

/** Every variable name a Tollbooth process reads: the server's and the agent's settings, and their `_FILE` forms. */
export function knownVariables(): string[] {
  const names = new Set([...Object.keys(EnvSchema.shape), ...Object.keys(AgentEnvSchema.shape)]);
  return [...names].flatMap((name) => [name, `${name}_FILE`]);
}

/** The unknown variables of `env` that look like ours, except those TOLLBOOTH_FOREIGN_ENV says belong to others. */
export function unknownVariables(env: NodeJS.ProcessEnv): Lookalike[] {
  const foreign = new Set(list(env.TOLLBOOTH_FOREIGN_ENV) ?? []);
  return lookalikeVariables(env, knownVariables()).filter((l) => !foreign.has(l.name));
}

/** The sentence naming the lookalikes and what to do about them. */
function lookalikeText(lookalikes: readonly Lookalike[]): string {
  return (
    `unknown environment variables that look like Tollbooth settings: ${describeLookalikes(lookalikes)}. ` +
    'Correct or unset them; if they belong to something else, list them in TOLLBOOTH_FOREIGN_ENV.'
  );
}

/**
 * Loads the server's configuration from `env` and checks its variable names: with NODE_ENV=production a lookalike
 * refuses the start (a ConfigError listing it with every other problem); otherwise it is returned to be warned about.
 */
export function loadServerConfig(env: NodeJS.ProcessEnv): { config: Config; lookalikes: Lookalike[] } {
  const lookalikes = unknownVariables(env);
  let config: Config;
  try {
    config = loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError && lookalikes.length > 0)
      throw new ConfigError(`${err.message}\nAlso, ${lookalikeText(lookalikes)}`);
    throw err;
  }
  if (config.production && lookalikes.length > 0) {
    throw new ConfigError(`NODE_ENV=production refuses to start with ${lookalikeText(lookalikes)}`);
  }
  return { config, lookalikes };
}

/** Warns about lookalike variables (outside production; in production they refused the start). */
export function warnLookalikes(lookalikes: readonly Lookalike[], log: Logger): void {
  if (lookalikes.length === 0) return;
  log.warn(
    `${lookalikeText(lookalikes)} They are ignored; with NODE_ENV=production, tollbooth serve refuses to start.`,
    {
      variables: lookalikes.map((l) => l.name),
    },
  );
}
