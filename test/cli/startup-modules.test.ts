import { setTimeout as sleep } from 'node:timers/promises';
import { generatePrivateKey } from 'viem/accounts';
import { afterAll, describe, expect, it } from 'vitest';
import { moduleTrace, type ModuleTrace, type TracedModule } from '../support/module-trace.js';
import { spawnServe, type SpawnedServer } from '../support/spawn.js';

const servers: SpawnedServer[] = [];
afterAll(async () => {
  for (const s of servers.splice(0)) await s.stop();
});

/** The packages of the facilitator side of the EVM rails (and of the chain SDKs), none of them needed for a 402. */
const FACILITATOR_SIDE = ['viem', 'ox', 'abitype', '@noble/curves', '@solana/kit', '@stellar/stellar-sdk', 'algosdk'];

const EXACT_SERVER = '/node_modules/@x402/evm/dist/esm/exact/server/index.mjs';
const UPTO_SERVER = '/node_modules/@x402/evm/dist/esm/upto/server/index.mjs';

/**
 * A server settling on Base Sepolia only (the table replaced), with its own EVM settlement key: the in-process
 * facilitator runs on its thread, whose chain (an unused port) is never asked for a 402.
 */
function settlingEnv(trace: ModuleTrace, schemes: string[]): Record<string, string> {
  const network = {
    id: 'eip155:84532',
    family: 'evm',
    asset: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
    decimals: 6,
    name: 'USDC',
    version: '2',
    label: 'Base Sepolia',
    rpcUrl: 'http://127.0.0.1:9',
    schemes,
  };
  return {
    ...trace.env,
    NETWORKS_JSON: JSON.stringify({ replace: true, networks: [network] }),
    PAY_TO_EVM: '0x1111111111111111111111111111111111111111',
    FACILITATOR_EVM_PRIVATE_KEY: generatePrivateKey(),
  };
}

/** The main thread's resolutions of a module (by URL suffix), one per importing module. */
const importsOf = (modules: TracedModule[], suffix: string) =>
  new Set(modules.filter((m) => m.thread === 0 && m.url.endsWith(suffix)).map((m) => m.parent));

/**
 * Waits until the main thread preloaded the server parts of the EVM rails: `@x402/evm/exact/server` imported by the
 * `exact` and the version-1 part (the last one preloaded) and, when `upto` is on, `@x402/evm/upto/server`.
 */
async function railsPreloaded(trace: ModuleTrace, upto: boolean): Promise<void> {
  for (;;) {
    const modules = trace.modules();
    if (importsOf(modules, EXACT_SERVER).size >= 2 && (!upto || importsOf(modules, UPTO_SERVER).size > 0)) return;
    await sleep(50);
  }
}

/** `@x402/evm` modules the main thread resolved that belong to a facilitator scheme, to `upto`, or to the package root. */
function evmFacilitatorModules(trace: ModuleTrace, uptoAllowed: boolean): string[] {
  return trace
    .modules()
    .filter((m) => m.thread === 0 && m.url.includes('/node_modules/@x402/evm/'))
    .map((m) => m.url.replace(/^.*\/node_modules\/@x402\/evm\/dist\/esm\//, ''))
    .filter((path) => /(^|\/)facilitator\/|^index\.mjs$/.test(path) || (!uptoAllowed && path.startsWith('upto/')));
}

async function first402(server: SpawnedServer): Promise<void> {
  const res = await fetch(`${server.url}/api/annuity`, { method: 'POST' });
  expect(res.status).toBe(402);
}

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

  it('loads only the light server parts of its EVM rails on the main thread when it settles with upto off: viem stays on the facilitator thread', async () => {
    const trace = moduleTrace();
    const server = await spawnServe(settlingEnv(trace, ['exact']));
    servers.push(server);
    await first402(server);
    const atFirst402 = trace.packages('main');
    await railsPreloaded(trace, false);
    await first402(server);
    const idle = trace.packages('main');
    for (const heavy of FACILITATOR_SIDE) {
      expect(atFirst402.has(heavy), `${heavy} loaded on the main thread by the first 402`).toBe(false);
      expect(idle.has(heavy), `${heavy} loaded on the main thread once idle`).toBe(false);
    }
    expect(evmFacilitatorModules(trace, false)).toEqual([]);
    // The tracer sees the other threads too: the facilitator thread did load viem and the facilitator schemes.
    expect(trace.packages().has('viem')).toBe(true);
  });

  it('loads viem on the main thread with the upto server scheme when upto is on, and still no facilitator scheme', async () => {
    const trace = moduleTrace();
    const server = await spawnServe(settlingEnv(trace, ['exact', 'upto']));
    servers.push(server);
    await first402(server);
    await railsPreloaded(trace, true);
    // `@x402/evm/upto/server` imports viem itself (its Permit2 helpers): the price of offering upto.
    expect(trace.packages('main').has('viem')).toBe(true);
    expect(evmFacilitatorModules(trace, true)).toEqual([]);
  });
});
