import { readFileSync } from 'node:fs';
import { parseEnv } from 'node:util';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/config.js';
import { AgentEnvSchema, loadAgentConfig } from '../src/agent/settings.js';
import { EnvSchema } from '../src/config/env.js';

const text = readFileSync(new URL('../.env.example', import.meta.url), 'utf8');
const lines = text.split('\n').filter((line) => line.trim() !== '');
/** `NAME=value` lines, set or commented out (`# NAME=value`). */
const settings = lines.flatMap((line) => {
  const match = /^(#\s*)?([A-Z][A-Z0-9_]*)=(.*)$/.exec(line);
  return match ? [{ name: match[2]!, value: match[3]!, active: match[1] === undefined }] : [];
});
// The server's settings and the agent side's (remote mode, `tollbooth call`), each read by its own schema.
const known = new Set(
  [...Object.keys(EnvSchema.shape), ...Object.keys(AgentEnvSchema.shape)].flatMap((name) => [name, `${name}_FILE`]),
);

describe('.env.example', () => {
  it('names only settings the server reads (each, or its _FILE form, is in the environment schema)', () => {
    expect(settings.length).toBeGreaterThan(20);
    expect(settings.map((s) => s.name).filter((name) => !known.has(name))).toEqual([]);
  });

  it('loads as the environment of a server that passes configuration validation', () => {
    const env = parseEnv(text);
    expect(Object.keys(env).sort()).toEqual(
      settings
        .filter((s) => s.active)
        .map((s) => s.name)
        .sort(),
    );
    expect(EnvSchema.safeParse(env).success).toBe(true);
    const config = loadConfig(env);
    expect(config.port).toBe(4021);
    expect(config.dataDir).toMatch(/\/data$/);
  });

  it('loads as the environment of an agent that passes its settings validation too', () => {
    const env = parseEnv(text);
    expect(AgentEnvSchema.safeParse(env).success).toBe(true);
    expect(loadAgentConfig(env).store.dataDir).toMatch(/\/data$/);
  });

  it('keeps to the syntax node --env-file, systemd and docker --env-file all read: no quotes, no trailing comments', () => {
    const other = lines.filter((line) => !line.startsWith('#') && !/^[A-Z][A-Z0-9_]*=[^\s"'#]*$/.test(line));
    expect(other).toEqual([]);
  });

  it('holds no secret: key, token and password settings are commented out, empty, or name a file', () => {
    const secretish = settings.filter((s) => /KEY|SECRET|TOKEN|MNEMONIC|PASSWORD|DATABASE_URL/.test(s.name));
    expect(secretish.length).toBeGreaterThan(3);
    for (const s of secretish) {
      expect(s.active, s.name).toBe(false);
      expect(s.value, s.name).toBe('');
    }
  });
});
