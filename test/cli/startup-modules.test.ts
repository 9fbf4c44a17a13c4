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

describe('tollbooth serve at rest', () => {
  it('answers its first 402, MPP challenges included, without loading mppx or viem (they load with the first credential)', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'tollbooth-trace-')), 'modules.txt');
    const server = await spawnServe({ NODE_OPTIONS: `--import ${trace}`, TOLLBOOTH_MODULE_TRACE: file });
    servers.push(server);
    const res = await fetch(`${server.url}/api/annuity`, { method: 'POST' });
    expect(res.status).toBe(402);
    expect(res.headers.get('www-authenticate')).toMatch(/^Payment /);
    const loaded = packagesIn(file);
    expect(loaded.size).toBeGreaterThan(0);
    for (const heavy of ['mppx', 'viem', 'ox', '@modelcontextprotocol/sdk', '@solana/kit', '@stellar/stellar-sdk', 'algosdk']) {
      expect(loaded.has(heavy), `${heavy} loaded at rest`).toBe(false);
    }
  });
});
