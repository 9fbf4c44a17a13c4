import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config/config.js';
import { createRuntime } from '../../src/runtime/runtime.js';
import { afterFirstAnswers } from '../../src/runtime/store-and-book.js';
import { silentLogger } from '../../src/shared/log.js';
import { PAY_TO_ENV } from '../support/pay-to.js';

const dir = mkdtempSync(join(tmpdir(), 'tollbooth-first-answers-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('what waits for the first answers', () => {
  it('runs only once the requests sent as the server listens had their moment', async () => {
    vi.useFakeTimers();
    try {
      let ran = false;
      const done = afterFirstAnswers(async () => {
        ran = true;
      }, 50);
      await vi.advanceTimersByTimeAsync(49);
      expect(ran).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      expect(ran).toBe(true);
      await done;
    } finally {
      vi.useRealTimers();
    }
  });

  it('opens the store left for later then, and never for a runtime closed before', async () => {
    const config = (name: string) =>
      loadConfig({ ...PAY_TO_ENV, DATA_DIR: join(dir, name), LOG_LEVEL: 'silent', MPP: 'off' });
    const opened = await createRuntime(config('opened'), { log: silentLogger, openStoreLater: true });
    await opened.started();
    expect(existsSync(join(dir, 'opened', 'tollbooth.db'))).toBe(true);
    await opened.close();

    const closed = await createRuntime(config('closed'), { log: silentLogger, openStoreLater: true });
    const started = closed.started();
    await closed.close();
    await started;
    expect(existsSync(join(dir, 'closed', 'tollbooth.db'))).toBe(false);
  });
});
