import { afterAll, describe, expect, it } from 'vitest';
import { moduleTrace } from '../support/module-trace.js';
import { spawnServe, type SpawnedServer } from '../support/spawn.js';

const servers: SpawnedServer[] = [];
afterAll(async () => {
  for (const s of servers.splice(0)) await s.stop();
});

describe('tollbooth serve answering discovery', () => {
  it('builds /openapi.json, /.well-known/x402 and /llms.txt with their MPP offers without loading mppx or viem', async () => {
    const trace = moduleTrace();
    const server = await spawnServe(trace.env);
    servers.push(server);
    const openapi = (await (await fetch(`${server.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { 'x-payment-info'?: { mpp?: unknown } }>>;
    };
    expect(openapi.paths['/api/annuity']!.post!['x-payment-info']!.mpp).toBeDefined();
    expect(((await (await fetch(`${server.url}/.well-known/x402`)).json()) as { mpp?: unknown }).mpp).toBeDefined();
    expect(await (await fetch(`${server.url}/llms.txt`)).text()).toContain('Authorization: Payment');
    const loaded = trace.packages();
    expect(loaded.size).toBeGreaterThan(0);
    for (const heavy of ['mppx', 'viem', 'ox']) expect(loaded.has(heavy), `${heavy} loaded by discovery`).toBe(false);
  });
});
