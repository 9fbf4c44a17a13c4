import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { AgentEnvSchema, DEFAULT_BUDGET } from '../src/agent/settings.js';
import { EnvSchema } from '../src/config/env.js';

const root = new URL('../', import.meta.url);
const read = (path: string): unknown => JSON.parse(readFileSync(new URL(path, root), 'utf8'));
const pkg = read('package.json') as { name: string; version: string; mcpName: string };
/** The official MCP registry's server.json schema, a verbatim copy (test/fixtures/mcp-registry/README.md). */
const schema = read('test/fixtures/mcp-registry/server.schema.json') as { $id: string };

interface EnvEntry {
  name: string;
  default?: string;
}
interface ServerJson {
  $schema: string;
  name: string;
  version: string;
  packages: Array<{
    registryType: string;
    identifier: string;
    version: string;
    transport: { type: string };
    packageArguments: Array<{ value?: string }>;
    environmentVariables: EnvEntry[];
  }>;
  remotes: Array<{ type: string; url: string }>;
}
const server = read('server.json') as ServerJson;

// ajv-formats is CommonJS with a default export; under ESM interop it may arrive wrapped.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (
  ajv: Ajv,
) => Ajv;

describe('server.json (the MCP registry entry)', () => {
  it('is valid against the official registry schema it names', () => {
    const ajv = new Ajv({ allErrors: true, strict: false });
    addFormats(ajv);
    const validate = ajv.compile(schema);
    const valid = validate(server);
    expect(validate.errors ?? []).toEqual([]);
    expect(valid).toBe(true);
    expect(server.$schema).toBe(schema.$id);
  });

  it("carries the package version and the npm package's mcpName", () => {
    expect(server.version).toBe(pkg.version);
    expect(server.name).toBe(pkg.mcpName);
    expect(server.name).toMatch(/^io\.github\.[A-Za-z0-9-]+\/[A-Za-z0-9._-]+$/);
  });

  it('installs the npm package tollbooth at this version and runs `tollbooth stdio`', () => {
    expect(server.packages).toHaveLength(1);
    const [npm] = server.packages;
    expect(npm).toMatchObject({
      registryType: 'npm',
      identifier: pkg.name,
      version: pkg.version,
      transport: { type: 'stdio' },
    });
    expect(npm!.packageArguments.map((arg) => arg.value)).toEqual(['stdio']);
  });

  it('names only settings the server reads, with their real defaults', () => {
    const names = [...Object.keys(EnvSchema.shape), ...Object.keys(AgentEnvSchema.shape)];
    const known = new Set(names.flatMap((name) => [name, `${name}_FILE`]));
    const entries = server.packages.flatMap((p) => p.environmentVariables);
    expect(entries.map((e) => e.name).filter((name) => !known.has(name))).toEqual([]);
    const defaults = Object.fromEntries(entries.filter((e) => e.default !== undefined).map((e) => [e.name, e.default]));
    expect(defaults).toEqual({
      BUDGET_MAX_USD_PER_CALL: String(DEFAULT_BUDGET.maxUsdPerCall),
      BUDGET_MAX_USD_PER_DAY: String(DEFAULT_BUDGET.maxUsdPerDay),
    });
  });

  it('describes a remote deployment over streamable HTTP at /mcp', () => {
    expect(server.remotes).toEqual([
      expect.objectContaining({ type: 'streamable-http', url: expect.stringMatching(/^https:\/\/.+\/mcp$/) }),
    ]);
  });
});
