import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/config.js';
import { buildChallenge } from '../../../src/payments/challenges/requirements.js';
import { paidTools as tools } from '../../../tools/index.js';

/** Each tool's x402 challenge as the first release (the seed) served it with the embedded defaults, as JSON text. */
const seed = JSON.parse(
  readFileSync(new URL('../../fixtures/challenges/seed.json', import.meta.url), 'utf8'),
) as Record<string, string>;

/**
 * The same as the first release shipped them, before the price sentences were generated from the tools' policies:
 * since then only the tools' descriptions may differ (`resource.description`, an entry's `description`).
 */
const firstRelease = JSON.parse(
  readFileSync(new URL('../../fixtures/challenges/seed-first-release.json', import.meta.url), 'utf8'),
) as Record<string, string>;

/** A challenge with every `description` string (at any depth) replaced by the same placeholder. */
function withoutDescriptions(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutDescriptions);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, child]) => [
      key,
      key === 'description' && typeof child === 'string' ? '(description)' : withoutDescriptions(child),
    ]),
  );
}

describe('the x402 challenges (a contract with clients and catalogs)', () => {
  it('are byte for byte those of the seed release, for every tool, with the embedded defaults', () => {
    const config = loadConfig({});
    for (const tool of tools) expect(JSON.stringify(buildChallenge(config, tool)), tool.name).toBe(seed[tool.name]);
    expect(Object.keys(seed).sort()).toEqual(tools.map((t) => t.name).sort());
  });

  it('equal those of the first release in every field but the description strings, for every tool', () => {
    const config = loadConfig({});
    expect(Object.keys(firstRelease).sort()).toEqual(tools.map((t) => t.name).sort());
    for (const tool of tools) {
      const now = withoutDescriptions(JSON.parse(JSON.stringify(buildChallenge(config, tool))));
      expect(now, tool.name).toEqual(withoutDescriptions(JSON.parse(firstRelease[tool.name]!)));
    }
  });
});
