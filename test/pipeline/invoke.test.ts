import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { CallEvent, InvokeDeps } from '../../src/pipeline/invoke.js';
import { invoke } from '../../src/pipeline/invoke.js';
import { silentLogger } from '../../src/shared/log.js';
import { defineTool, isPaid } from '../../src/tool/tool.js';

/** A stand-in that fails the test as soon as anything reads from it (the broker a free call must never reach). */
function untouchable<T extends object>(what: string): T {
  return new Proxy({} as T, {
    get: (_target, key) => {
      throw new Error(`a free call touched the ${what} (${String(key)})`);
    },
  });
}

const echo = defineTool({
  name: 'echo-free',
  title: 'Echo',
  description: 'Returns its word.',
  group: 'tools',
  method: 'GET',
  path: '/v1/echo-free',
  input: z.object({ word: z.string().default('hello') }),
  output: z.object({ said: z.string() }),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  handler: (input) => ({ said: input.word }),
});

function deps(events: CallEvent[] = []): InvokeDeps {
  return {
    broker: untouchable('broker'),
    store: untouchable('store'),
    providers: untouchable('providers'),
    log: silentLogger,
    observe: (event) => events.push(event),
    admit: () => Promise.reject(new Error('a free call asked the abuse limits')),
  };
}

const call = (input: unknown, payment?: { source: 'payment-signature'; value: string }) => ({
  tool: echo,
  input,
  ...(payment ? { proof: payment } : {}),
  transport: 'http' as const,
  signal: new AbortController().signal,
});

describe('invoke of a tool without a price', () => {
  it('is a free tool', () => {
    expect(isPaid(echo)).toBe(false);
  });

  it('runs the handler and answers its output with no receipt, never reaching the broker', async () => {
    expect(await invoke(deps(), call({ word: 'hi' }))).toEqual({ type: 'success', output: { said: 'hi' } });
  });

  it('reads a call without input as an empty input instead of asking for a payment', async () => {
    expect(await invoke(deps(), call(undefined))).toEqual({ type: 'success', output: { said: 'hello' } });
  });

  it('ignores a payment sent along, without reading it', async () => {
    expect(
      await invoke(deps(), call({ word: 'hi' }, { source: 'payment-signature', value: 'not-even-base64' })),
    ).toEqual({ type: 'success', output: { said: 'hi' } });
  });

  it('answers invalid input with an invalid_input error naming the field', async () => {
    const result = await invoke(deps(), call({ word: 3 }));
    expect(result.type === 'error' && { code: result.error.code, field: result.error.field }).toEqual({
      code: 'invalid_input',
      field: 'word',
    });
  });

  it('tells the observer that a free call started and how it ended', async () => {
    const events: CallEvent[] = [];
    await invoke(deps(events), call({ word: 'hi' }));
    expect(events.map((e) => ({ ...e, ...('totalMs' in e ? { totalMs: 0 } : {}) }))).toEqual([
      { type: 'started', tool: 'echo-free' },
      { type: 'free', tool: 'echo-free', outcome: 'success', totalMs: 0 },
    ]);
  });
});
