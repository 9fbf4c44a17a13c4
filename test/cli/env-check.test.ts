import { describe, expect, it } from 'vitest';
import { AgentEnvSchema } from '../../src/agent/settings.js';
import { knownVariables, loadServerConfig, unknownVariables } from '../../src/cli/env-check.js';
import { ConfigError } from '../../src/config/config.js';
import { EnvSchema } from '../../src/config/env.js';
import { PAY_TO_ENV } from '../support/pay-to.js';

/** True when `b` is `a` with one letter changed, one pair of neighbours swapped, or one letter added or taken away. */
function oneEditApart(a: string, b: string): boolean {
  if (a.length < b.length) return oneEditApart(b, a);
  let i = 0;
  while (i < b.length && a[i] === b[i]) i++;
  if (a.length > b.length) return a.slice(i + 1) === b.slice(i);
  const rest = (skip: number) => a.slice(i + skip) === b.slice(i + skip);
  return rest(1) || (a[i] === b[i + 1] && a[i + 1] === b[i] && rest(2));
}

const closestOf = (env: Record<string, string>) =>
  Object.fromEntries(unknownVariables(env).map((l) => [l.name, l.closest]));

describe('unknown environment variables that look like ours', () => {
  it('are named with the closest known name: server settings, agent settings and their families', () => {
    expect(
      closestOf({
        DATABSE_URL: 'x',
        FACILITATOR_ULR: 'x',
        PAY_T0_EVM: 'x',
        BASE_URL_TOOL: 'x',
        WALLET_EVM_PRIVATE_KY: 'x',
        BUDGET_MAX_USD_PER_DAI: 'x',
        FACILITATOR_URL_SVM: 'x',
        database_url: 'x',
        LOG_LEVLE: 'x',
      }),
    ).toEqual({
      DATABSE_URL: 'DATABASE_URL',
      FACILITATOR_ULR: 'FACILITATOR_URL',
      PAY_T0_EVM: 'PAY_TO_EVM',
      BASE_URL_TOOL: 'BASE_URL_TOOLS',
      WALLET_EVM_PRIVATE_KY: 'WALLET_EVM_PRIVATE_KEY',
      BUDGET_MAX_USD_PER_DAI: 'BUDGET_MAX_USD_PER_DAY',
      FACILITATOR_URL_SVM: 'FACILITATOR_URL_SOLANA',
      database_url: 'DATABASE_URL',
      LOG_LEVLE: 'LOG_LEVEL',
    });
  });

  it('include any variable with one of our prefixes, even far from every known name', () => {
    expect(closestOf({ FACILITATOR_SOMETHING_ELSE: 'x', MCP_WHATEVER_THIS_IS: 'x' })).toHaveProperty(
      'FACILITATOR_SOMETHING_ELSE',
    );
    expect(unknownVariables({ BASE_URL: 'x' })).toEqual([
      { name: 'BASE_URL', closest: expect.stringContaining('BASE_URL_TOOLS') },
    ]);
  });

  it("leave the shell's, npm's, Node's and other programs' variables alone, and the ones TOLLBOOTH_FOREIGN_ENV lists", () => {
    expect(
      unknownVariables({
        PATH: '/bin',
        HOME: '/root',
        HOSTNAME: 'box',
        LANG: 'C',
        TERM: 'xterm',
        PWD: '/',
        NODE_OPTIONS: '--import x',
        NODE_EXTRA_CA_CERTS: '/ca',
        npm_config_cache: '/tmp',
        npm_lifecycle_event: 'start',
        KUBERNETES_SERVICE_HOST: '10.0.0.1',
        AWS_REGION: 'eu-west-1',
        MCP_SIDECAR_URL: 'http://sidecar',
        TOLLBOOTH_FOREIGN_ENV: 'MCP_SIDECAR_URL',
      }),
    ).toEqual([]);
  });

  it("know every key of the server's and the agent's schemas and their _FILE forms (new settings are picked up)", () => {
    const known = knownVariables();
    for (const name of [...Object.keys(EnvSchema.shape), ...Object.keys(AgentEnvSchema.shape)]) {
      expect(known).toContain(name);
      expect(known).toContain(`${name}_FILE`);
    }
    expect(unknownVariables(Object.fromEntries(known.map((name) => [name, 'x'])))).toEqual([]);
  });

  it('name every known setting typed with one substitution, transposition or missing letter (none is passed over)', () => {
    const known = knownVariables();
    const typos = known.flatMap((name) => {
      const at = Math.floor(name.length / 2);
      return [
        `${name.slice(0, at)}Q${name.slice(at + 1)}`,
        `${name.slice(0, at - 1)}${name[at]}${name[at - 1]}${name.slice(at + 1)}`,
        `${name.slice(0, at)}${name.slice(at + 1)}`,
      ].filter((typo) => !known.includes(typo));
    });
    const env = Object.fromEntries(typos.map((typo) => [typo, 'x']));
    const closest = closestOf(env);
    for (const typo of typos) {
      // Another known name may be as close as the one mistyped: whichever is named, it is one edit away.
      expect(closest[typo], typo).toBeDefined();
      expect(oneEditApart(typo, closest[typo]!), `${typo} named ${closest[typo]}`).toBe(true);
    }
  });
});

describe('loadServerConfig', () => {
  it('returns the lookalikes to be warned about outside production', () => {
    const { config, lookalikes } = loadServerConfig({ LOG_LEVEL: 'silent', DATABSE_URL: 'postgres://x' });
    expect(config.production).toBe(false);
    expect(lookalikes).toEqual([{ name: 'DATABSE_URL', closest: 'DATABASE_URL' }]);
  });

  it('refuses a production start with a lookalike, listed with every other problem of the configuration', () => {
    const attempt = () =>
      loadServerConfig({ NODE_ENV: 'production', ...PAY_TO_ENV, FACILITATOR_ULR: 'https://facilitator.example' });
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(/FACILITATOR_ULR \(did you mean FACILITATOR_URL\?\)/);
    expect(attempt).toThrow(/no facilitator or settlement key can settle payments on evm, svm, stellar, algorand/);
  });

  it('refuses a production start with only a lookalike wrong, and takes it once TOLLBOOTH_FOREIGN_ENV lists it', () => {
    const env = {
      NODE_ENV: 'production',
      ...PAY_TO_ENV,
      FACILITATOR_URL: 'https://facilitator.example',
      MPP: 'off',
      PAY_TO_EMV: 'x',
    };
    expect(() => loadServerConfig(env)).toThrow(
      /NODE_ENV=production refuses to start with unknown environment variables .*PAY_TO_EMV \(did you mean PAY_TO_EVM\?\)/,
    );
    expect(loadServerConfig({ ...env, TOLLBOOTH_FOREIGN_ENV: 'PAY_TO_EMV' }).lookalikes).toEqual([]);
  });
});
