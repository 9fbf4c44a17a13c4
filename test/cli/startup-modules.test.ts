import { afterAll, describe, expect, it } from 'vitest';
import { moduleTrace } from '../support/module-trace.js';
import { spawnServe, type SpawnedServer } from '../support/spawn.js';

const servers: SpawnedServer[] = [];
afterAll(async () => {
  for (const s of servers.splice(0)) await s.stop();
});

describe('tollbooth serve at rest', () => {
  it('answers its first 402, MPP challenges included, without loading mppx or viem (they load with the first credential)', async () => {
    const trace = moduleTrace();
    const server = await spawnServe(trace.env);
    servers.push(server);
    const res = await fetch(`${server.url}/api/annuity`, { method: 'POST' });
    expect(res.status).toBe(402);
    expect(res.headers.get('www-authenticate')).toMatch(/^Payment /);
    const loaded = trace.packages();
    expect(loaded.size).toBeGreaterThan(0);
    for (const heavy of [
      'mppx',
      'viem',
      'ox',
      '@modelcontextprotocol/sdk',
      '@solana/kit',
      '@stellar/stellar-sdk',
      'algosdk',
    ]) {
      expect(loaded.has(heavy), `${heavy} loaded at rest`).toBe(false);
    }
  });
});
