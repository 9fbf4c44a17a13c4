import { describe, expect, it } from 'vitest';
import { Turns } from '../../src/limits/turns.js';

describe('main-thread turns', () => {
  it('hands out turns in the order they were asked for', async () => {
    const turns = new Turns();
    const order: number[] = [];
    await Promise.all([1, 2, 3, 4].map((n) => turns.take().then(() => order.push(n))));
    expect(order).toEqual([1, 2, 3, 4]);
    expect(turns.queued).toBe(0);
  });

  it('gives at most one turn per event-loop iteration, so work queued between two turns runs between them', async () => {
    const turns = new Turns();
    const events: string[] = [];
    const first = turns.take().then(() => {
      events.push('first turn');
      // What an I/O callback of the next iteration stands for: queued when the first turn runs.
      setImmediate(() => events.push('work between turns'));
    });
    const second = turns.take().then(() => events.push('second turn'));
    expect(turns.queued).toBe(2);
    await Promise.all([first, second]);
    expect(events).toEqual(['first turn', 'work between turns', 'second turn']);
  });
});
