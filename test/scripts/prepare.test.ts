import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

describe('the prepare script (scripts/prepare.mjs)', () => {
  it('builds nothing with TOLLBOOTH_PREPARE_BUILD=0, says so and succeeds', () => {
    const result = spawnSync(process.execPath, ['scripts/prepare.mjs'], {
      cwd: ROOT,
      env: { ...process.env, TOLLBOOTH_PREPARE_BUILD: '0', npm_command: 'ci', npm_execpath: '/nonexistent/npm-cli.js' },
      encoding: 'utf8',
    });
    expect(result.status).toBe(0);
    expect(result.stderr).toContain('not building dist/ (TOLLBOOTH_PREPARE_BUILD=0)');
  });

  it('skips for npm pack and publish, which build in prepack', () => {
    for (const command of ['pack', 'publish']) {
      const result = spawnSync(process.execPath, ['scripts/prepare.mjs'], {
        cwd: ROOT,
        env: { ...process.env, npm_command: command, npm_execpath: '/nonexistent/npm-cli.js' },
        encoding: 'utf8',
      });
      expect(result.status).toBe(0);
      expect(result.stderr).toBe('');
    }
  });
});
