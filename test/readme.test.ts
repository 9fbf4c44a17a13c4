import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { toolTableMarkdown } from '../src/tool/catalog.js';
import { loadConfig } from '../src/config/config.js';
import { AgentEnvSchema } from '../src/agent/settings.js';
import { EnvSchema } from '../src/config/env.js';
import { paidTools as tools } from '../tools/index.js';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const operators = readFileSync(new URL('../docs/operators.md', import.meta.url), 'utf8');
const agents = readFileSync(new URL('../docs/agents.md', import.meta.url), 'utf8');

describe('README', () => {
  it('starts with the install-and-start command and the test command', () => {
    const firstBlock = readme.split('```')[1] ?? '';
    expect(firstBlock).toMatch(/npm ci && npm start/);
    expect(firstBlock).toMatch(/npm test/);
  });

  it('shows the tool table generated from the definitions (run `npm run readme:tools` after changing a tool)', () => {
    expect(readme).toContain(toolTableMarkdown(loadConfig({}), tools));
  });

  it('links the operators guide, which documents every configuration variable the server reads', () => {
    expect(readme).toContain('docs/operators.md');
    const names = Object.keys(EnvSchema.shape);
    expect(names.length).toBeGreaterThan(50);
    for (const name of names) {
      if (name === 'NODE_ENV') continue;
      expect(operators, `docs/operators.md documents ${name}`).toContain(name);
    }
  });

  it('links the agents guide, which documents every setting the agent side reads (its own schema)', () => {
    expect(readme).toContain('docs/agents.md');
    const names = Object.keys(AgentEnvSchema.shape);
    expect(names.length).toBeGreaterThan(20);
    for (const name of names) expect(agents, `docs/agents.md documents ${name}`).toContain(name);
  });

  it('stays under 200 lines, mentions the demo, and reads receipts back without a placeholder address', () => {
    expect(readme.trimEnd().split('\n').length).toBeLessThan(200);
    expect(readme).toContain('npm run demo');
    const receiptsLine = readme.split('\n').find((line) => /cli\.js receipts/.test(line));
    expect(receiptsLine).toBeDefined();
    expect(receiptsLine).not.toMatch(/0xYour/);
  });

  it('is what .ci/run runs', () => {
    const ci = readFileSync(new URL('../.ci/run', import.meta.url), 'utf8');
    expect(ci).toMatch(/npm test/);
  });
});
