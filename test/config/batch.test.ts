import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.js';

const KEY = `0x${'12'.repeat(32)}`;

describe('the batch-settlement settings', () => {
  it('are off by default, with a one-day withdrawal delay and no operator key', () => {
    expect(loadConfig({}).batch).toMatchObject({ enabled: false, withdrawDelay: 86_400 });
    expect(loadConfig({}).batch.receiverAuthorizerKey).toBeUndefined();
  });

  it('take the switch, the receiver-authorizer key and the delay from the environment', () => {
    const { batch } = loadConfig({
      BATCH_SETTLEMENT: 'on',
      BATCH_RECEIVER_AUTHORIZER_KEY: KEY,
      BATCH_WITHDRAW_DELAY: '900',
    });
    expect(batch).toMatchObject({ enabled: true, receiverAuthorizerKey: KEY, withdrawDelay: 900 });
  });

  it('refuse a withdrawal delay under 15 minutes, a switch other than on or off, and a malformed key', () => {
    expect(() => loadConfig({ BATCH_WITHDRAW_DELAY: '899' })).toThrow(
      /at least 900 seconds[\s\S]*BATCH_WITHDRAW_DELAY/,
    );
    expect(() => loadConfig({ BATCH_SETTLEMENT: 'yes' })).toThrow(/BATCH_SETTLEMENT/);
    expect(() => loadConfig({ BATCH_RECEIVER_AUTHORIZER_KEY: '0x1234' })).toThrow(/BATCH_RECEIVER_AUTHORIZER_KEY/);
  });
});
