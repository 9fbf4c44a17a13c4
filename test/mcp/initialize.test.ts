import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { LATEST_PROTOCOL_VERSION, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newMcpServer } from '../../src/runtime/runtime.js';
import { CLI_PATH } from '../support/mcp.js';
import { startTestServer, type TestServer } from '../support/server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

const valid = {
  protocolVersion: LATEST_PROTOCOL_VERSION,
  capabilities: {},
  clientInfo: { name: 'test', version: '1.0.0' },
};

/** Initialize requests whose params are missing or wrong, and the field the answer must name. */
const malformed: Array<[string, unknown, string]> = [
  ['no params', undefined, 'params is missing'],
  ['params an array', [1], 'params is an array'],
  ['no protocolVersion', { ...valid, protocolVersion: undefined }, 'params.protocolVersion is missing'],
  ['a numeric protocolVersion', { ...valid, protocolVersion: 20250618 }, 'params.protocolVersion is a number'],
  ['no capabilities', { ...valid, capabilities: undefined }, 'params.capabilities is missing'],
  ['no clientInfo', { ...valid, clientInfo: undefined }, 'params.clientInfo is missing'],
  ['clientInfo a string', { ...valid, clientInfo: 'test' }, 'params.clientInfo is a string'],
  ['clientInfo without a name', { ...valid, clientInfo: { version: '1' } }, 'params.clientInfo.name is missing'],
  ['clientInfo without a version', { ...valid, clientInfo: { name: 'x' } }, 'params.clientInfo.version is missing'],
];

const request = (id: number, params: unknown) => ({
  jsonrpc: '2.0',
  id,
  method: 'initialize',
  ...(params === undefined ? {} : { params }),
});

describe('initialize with missing or invalid params over streamable HTTP', () => {
  const post = (body: unknown) =>
    fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify(body),
    });

  it.each(malformed)(
    'answers %s with JSON-RPC invalid params (-32602) naming the field, not "initialize first"',
    async (_case, params, says) => {
      const res = await post(request(7, params));
      expect(res.status).toBe(400);
      expect(res.headers.get('mcp-session-id')).toBeNull();
      const body = (await res.json()) as { id: unknown; error: { code: number; message: string } };
      expect(body.id).toBe(7);
      expect(body.error.code).toBe(-32602);
      expect(body.error.message).toContain(says);
      expect(body.error.message).not.toMatch(/initialize request first/);
    },
  );

  it('still opens a session for a valid initialize, and still asks for one before anything else', async () => {
    const ok = await post(request(1, valid));
    expect(ok.status).toBe(200);
    expect(ok.headers.get('mcp-session-id')).toBeTruthy();
    const other = await post({ jsonrpc: '2.0', id: 2, method: 'tools/list' });
    expect(other.status).toBe(400);
    expect(((await other.json()) as { error: { message: string } }).error.message).toMatch(/initialize request first/);
  });
});

describe('initialize with missing or invalid params on a connected transport (as stdio)', () => {
  it.each(malformed)(
    'answers %s with -32602 naming the field, and a valid initialize afterwards still works',
    async (_case, params, says) => {
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
      const answers: JSONRPCMessage[] = [];
      clientSide.onmessage = (message) => void answers.push(message);
      await (await newMcpServer(server.runtime)).connect(serverSide);
      await clientSide.start();
      await clientSide.send(request(3, params) as JSONRPCMessage);
      await clientSide.send(request(4, valid) as JSONRPCMessage);
      await expect.poll(() => answers.length).toBe(2);
      expect(answers[0]).toMatchObject({ id: 3, error: { code: -32602, message: expect.stringContaining(says) } });
      expect(answers[1]).toMatchObject({
        id: 4,
        result: { protocolVersion: LATEST_PROTOCOL_VERSION, serverInfo: { name: 'tollbooth' } },
      });
      await clientSide.close();
    },
  );

  it('answers the same from `tollbooth stdio` (the built CLI)', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tollbooth-initialize-'));
    const child = spawn(process.execPath, [CLI_PATH, 'stdio'], {
      env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'silent', DATA_DIR: dataDir },
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    try {
      const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
      child.stdin!.write(`${JSON.stringify(request(5, { ...valid, clientInfo: { name: 'x' } }))}\n`);
      const answer = JSON.parse(String((await lines.next()).value)) as {
        id: number;
        error: { code: number; message: string };
      };
      expect(answer).toMatchObject({
        id: 5,
        error: { code: -32602, message: expect.stringContaining('params.clientInfo.version is missing') },
      });
    } finally {
      child.kill();
      if (child.exitCode === null && child.signalCode === null)
        await new Promise((resolve) => child.once('exit', resolve));
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
