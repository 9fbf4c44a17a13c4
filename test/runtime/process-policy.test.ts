import { pathToFileURL } from 'node:url';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { describeFailure } from '../../src/runtime/process-policy.js';
import { spawnServe, type SpawnedServer } from '../support/spawn.js';

const PRELOAD = pathToFileURL(fileURLToPath(new URL('../support/inject-failure.mjs', import.meta.url))).href;
let server: SpawnedServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

/** The built CLI (`npm run build` first) with a preload that fails the process on SIGUSR2 as asked. */
function serveWithInjectedFailure(kind: 'rejection' | 'exception'): Promise<SpawnedServer> {
  return spawnServe({
    NODE_OPTIONS: `--import ${PRELOAD}`,
    TOLLBOOTH_TEST_INJECT: kind,
    LOG_LEVEL: 'info',
    SHUTDOWN_TIMEOUT_MS: '5000',
  });
}

const metric = async (url: string, name: string) => {
  const text = await (await fetch(url + '/metrics')).text();
  const line = text.split('\n').find((l) => l.startsWith(name + ' '));
  return line === undefined ? undefined : Number(line.split(' ')[1]);
};

describe('what is logged about an unhandled failure', () => {
  it('keeps the type, the first line and the first stack frame, and cuts URLs to their origin', () => {
    const err = new TypeError(
      'fetch failed for https://base-mainnet.example/v2/KEY123?token=KEY456\nRequest body: {"params":["0xsecret"]}',
    );
    const described = describeFailure(err);
    expect(described).toMatchObject({ type: 'TypeError', error: 'fetch failed for https://base-mainnet.example' });
    expect(described.at).toMatch(/^at /);
    expect(JSON.stringify(described)).not.toMatch(/KEY123|KEY456|0xsecret/);
  });

  it('describes rejections with a value that is not an Error', () => {
    expect(describeFailure('plain text reason')).toEqual({ error: 'plain text reason', type: 'string' });
    expect(describeFailure({ code: 429 })).toEqual({ error: '{"code":429}', type: 'object' });
    expect(describeFailure(undefined)).toEqual({ error: 'undefined', type: 'undefined' });
  });
});

describe('the server process (built CLI) when something fails outside every handler', () => {
  it('logs an unhandled rejection at error level without secrets, counts it in /metrics, and keeps serving', async () => {
    server = await serveWithInjectedFailure('rejection');
    expect(await metric(server.url, 'tollbooth_unhandled_rejections_total')).toBe(0);
    server.child.kill('SIGUSR2');
    const line = await server.logged('unhandled promise rejection; kept serving');
    expect(line).toMatchObject({
      level: 'error',
      type: 'Error',
      error: 'injected rejection calling https://rpc.example.test',
    });
    expect(server.stderr()).not.toContain('SEKRET-KEY-123');
    expect((await fetch(server.url + '/healthz')).status).toBe(200);
    expect(await metric(server.url, 'tollbooth_unhandled_rejections_total')).toBe(1);
    expect(server.child.exitCode).toBeNull();
  });

  it('stops gracefully after an uncaught exception and exits with 1, logging it without secrets', async () => {
    server = await serveWithInjectedFailure('exception');
    server.child.kill('SIGUSR2');
    expect(await server.exited).toBe(1);
    const logs = server.logs();
    expect(logs.find((l) => String(l.msg).startsWith('uncaught exception'))).toMatchObject({
      level: 'error',
      type: 'Error',
      error: 'injected exception calling https://rpc.example.test',
    });
    expect(logs.find((l) => l.msg === 'stopped')).toBeDefined();
    expect(server.stderr()).not.toContain('SEKRET-KEY-123');
  });
});
