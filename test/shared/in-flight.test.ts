import { describe, expect, it } from 'vitest';
import { InFlight } from '../../src/shared/in-flight.js';

describe('InFlight', () => {
  it('counts work while it runs and drains when the last piece ends, even one that threw', async () => {
    const work = new InFlight();
    expect(await work.drain(0)).toBe(true);
    let finish!: () => void;
    const running = work.run(() => new Promise<void>((resolve) => (finish = resolve)));
    const failing = work.run(async () => {
      throw new Error('boom');
    });
    expect(work.count).toBe(2);
    await expect(failing).rejects.toThrow('boom');
    expect(work.count).toBe(1);
    const drained = work.drain(60_000);
    finish();
    await running;
    expect(await drained).toBe(true);
    expect(work.count).toBe(0);
  });

  it('gives up when the time limit passes first, and never counts below none', async () => {
    const work = new InFlight();
    work.enter();
    expect(await work.drain(10)).toBe(false);
    work.leave();
    work.leave();
    expect(work.count).toBe(0);
  });
});
