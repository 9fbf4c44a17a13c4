import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { spawnServe, type SpawnedServer } from '../support/spawn.js';

const trace = fileURLToPath(new URL('../support/module-trace.mjs', import.meta.url));
const servers: SpawnedServer[] = [];
afterAll(async () => {
  for (const s of servers.splice(0)) await s.stop();
});

/** The packages a process resolved, by name (from the node_modules paths it loaded). */
function packagesIn(file: string): Set<string> {
  const names = readFileSync(file, 'utf8').split('\n').flatMap((url) => {
    const match = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(url);
    return match ? [match[1]!] : [];
  });
  return new Set(names);
}

describe('tollbooth serve answering discovery', () => {
  it('builds /openapi.json, /.well-known/x402 and /llms.txt with their MPP offers without loading mppx or viem', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'tollbooth-trace-')), 'modules.txt');
    const server = await spawnServe({ NODE_OPTIONS: `--import ${trace}`, TOLLBOOTH_MODULE_TRACE: file });
    servers.push(server);
    const openapi = (await (await fetch(`${server.url}/openapi.json`)).json()) as { paths: Record<string, Record<string, { 'x-payment-info'?: { mpp?: unknown } }>> };
    expect(openapi.paths['/api/annuity']!.post!['x-payment-info']!.mpp).toBeDefined();
    expect(((await (await fetch(`${server.url}/.well-known/x402`)).json()) as { mpp?: unknown }).mpp).toBeDefined();
    expect(await (await fetch(`${server.url}/llms.txt`)).text()).toContain('Authorization: Payment');
    const loaded = packagesIn(file);
    expect(loaded.size).toBeGreaterThan(0);
    for (const heavy of ['mppx', 'viem', 'ox']) expect(loaded.has(heavy), `${heavy} loaded by discovery`).toBe(false);
  });
});
