import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { buildChallenge } from '../../src/payments/requirements.js';
import { paidTools as tools } from '../../tools/index.js';

/** Each tool's x402 challenge as the first release (the seed) served it with the embedded defaults, as JSON text. */
const seed = JSON.parse(readFileSync(new URL('../fixtures/challenges/seed.json', import.meta.url), 'utf8')) as Record<
  string,
  string
>;

describe('the x402 challenges (a contract with clients and catalogs)', () => {
  it('are byte for byte those of the seed release, for every tool, with the embedded defaults', () => {
    const config = loadConfig({});
    for (const tool of tools) expect(JSON.stringify(buildChallenge(config, tool)), tool.name).toBe(seed[tool.name]);
    expect(Object.keys(seed).sort()).toEqual(tools.map((t) => t.name).sort());
  });
});
