import { spawn, type ChildProcess } from 'node:child_process';
import { stat } from 'node:fs';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { afterEach, describe, expect, it } from 'vitest';
import { createHttpFacilitatorClient } from '../../../src/payments/facilitators/facilitator-http.js';
import { resendable } from '../../../src/payments/facilitators/facilitator-pool.js';

const SCRIPT = new URL('../../support/closing-facilitator.mjs', import.meta.url).pathname;
const payload = { x402Version: 2, accepted: {}, payload: {} } as unknown as PaymentPayload;
const requirements = { scheme: 'exact', network: 'eip155:84532' } as unknown as PaymentRequirements;

interface Counts {
  verify: number;
  settle: number;
  supported: number;
  dropped: number;
}

/** The look-alike in a process of its own, and a client of it. */
async function start(env: Record<string, string>) {
  const child = spawn(process.execPath, [SCRIPT], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  const port = await new Promise<string>((resolve, reject) => {
    child.stdout!.once('data', (d: Buffer) => resolve(String(d).trim()));
    child.once('exit', (code) => reject(new Error(`the look-alike exited (${code})`)));
  });
  const url = `http://127.0.0.1:${port}`;
  const client = createHttpFacilitatorClient(url, { timeoutMs: 5000, settleTimeoutMs: 5000, connections: 4 });
  clients.push(client);
  const counts = async () => (await (await fetch(`${url}/counts`)).json()) as Counts;
  return { client, counts };
}

const children: ChildProcess[] = [];
const clients: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  for (const child of children.splice(0)) child.kill();
});

/**
 * Blocks this process's event loop for `ms` inside an I/O callback (as a CPU-heavy handler would), then starts `calls`
 * before the loop has polled again: the connections the facilitator closed meanwhile look alive to the pool.
 */
function afterBlock<T>(ms: number, calls: () => Promise<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    stat('.', () => {
      const until = Date.now() + ms;
      while (Date.now() < until) {
        // busy: the loop is blocked
      }
      calls().then(resolve, reject);
    });
  });
}

const four = <T>(call: () => Promise<T>) => Promise.allSettled([call(), call(), call(), call()]);
const failures = (results: PromiseSettledResult<unknown>[]) => results.filter((r) => r.status === 'rejected');

describe('the connections to a facilitator that closes idle ones', () => {
  for (const mode of ['fin', 'rst'] as const) {
    it(`never fail a verify or a settle after the loop was blocked past the close (${mode}, unannounced)`, async () => {
      const { client, counts } = await start({ CLOSE_MODE: mode, IDLE_MS: '200' });
      for (let round = 0; round < 3; round++) {
        expect(failures(await four(() => client.verify(payload, requirements)))).toEqual([]);
        expect(failures(await afterBlock(600, () => four(() => client.verify(payload, requirements))))).toEqual([]);
        expect(failures(await four(() => client.verify(payload, requirements)))).toEqual([]);
        expect(failures(await afterBlock(600, () => four(() => client.settle(payload, requirements))))).toEqual([]);
      }
      // Every settle reached the facilitator exactly once.
      expect((await counts()).settle).toBe(12);
    });
  }

  it('closes a connection by the wall clock once it idled past the announced Keep-Alive, also while the loop was blocked', async () => {
    const { client, counts } = await start({ CLOSE_MODE: 'announce', IDLE_MS: '3000' });
    expect(failures(await four(() => client.verify(payload, requirements)))).toEqual([]);
    // Blocked past the announced 3 s: undici's own idle timer did not run; the connections must not be reused.
    expect(failures(await afterBlock(3600, () => four(() => client.settle(payload, requirements))))).toEqual([]);
    expect(await counts()).toMatchObject({ settle: 4, dropped: 0 });
  });
});

/** Opens the pool's connections, then lets undici mark them free again: the next request reuses one. */
async function warm(client: ReturnType<typeof createHttpFacilitatorClient>): Promise<void> {
  expect(failures(await four(() => client.verify(payload, requirements)))).toEqual([]);
  await new Promise((resolve) => setImmediate(resolve));
}

describe('a request that fails on a reused connection', () => {
  it('is sent once more on a fresh connection when it is a verify', async () => {
    const { client, counts } = await start({ CLOSE_MODE: 'announce', IDLE_MS: '60000', DROP_REUSED: '1' });
    await warm(client);
    await expect(client.verify(payload, requirements)).resolves.toMatchObject({ isValid: true });
    // Four to open the connections, the one dropped on a reused connection, and the same verify sent again.
    expect(await counts()).toMatchObject({ verify: 6, dropped: 1 });
  });

  it('is never sent again when it is a settle the facilitator may have read: its outcome is unknown', async () => {
    const { client, counts } = await start({ CLOSE_MODE: 'announce', IDLE_MS: '60000', DROP_REUSED: '1' });
    await warm(client);
    await expect(client.settle(payload, requirements)).rejects.toMatchObject({ code: 'UND_ERR_SOCKET' });
    expect(await counts()).toMatchObject({ settle: 1, dropped: 1 });
  });
});

describe('resendable', () => {
  const lost = (code: string, syscall?: string) => Object.assign(new Error(code), { code, syscall });
  it('refuses errors that did not come through a facilitator pool', () => {
    expect(resendable('verify', lost('ECONNRESET'))).toBe(false);
    expect(resendable('verify', undefined)).toBe(false);
  });
});
