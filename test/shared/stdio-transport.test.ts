import { PassThrough } from 'node:stream';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { BoundedStdioServerTransport } from '../../src/shared/stdio-transport.js';

/** A transport over in-memory streams with a small limit, recording what it delivers, reports and writes. */
async function harness(maxLineBytes: number) {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const written: string[] = [];
  stdout.on('data', (chunk: Buffer) => written.push(chunk.toString('utf8')));
  const messages: JSONRPCMessage[] = [];
  const errors: Error[] = [];
  const oversized: number[] = [];
  const transport = new BoundedStdioServerTransport({
    stdin,
    stdout,
    maxLineBytes,
    onOversizedLine: (bytes) => oversized.push(bytes),
  });
  transport.onmessage = (m) => messages.push(m);
  transport.onerror = (e) => errors.push(e);
  await transport.start();
  /** Writes raw bytes to stdin and lets the stream deliver them. */
  const feed = async (...chunks: string[]) => {
    for (const chunk of chunks) stdin.write(chunk);
    await new Promise((resolve) => setImmediate(resolve));
  };
  const replies = () =>
    written
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { id: unknown; error?: { code: number; message: string } });
  return { transport, feed, messages, errors, oversized, replies };
}

const ping = (id: number) => JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' });

describe('the bounded stdio transport', () => {
  it('delivers lines split across chunks, several lines per chunk and CRLF endings', async () => {
    const h = await harness(1024);
    const a = ping(1);
    await h.feed(a.slice(0, 5), a.slice(5) + '\n' + ping(2) + '\r\n' + ping(3).slice(0, 3), ping(3).slice(3) + '\n');
    expect(h.messages.map((m) => (m as { id: number }).id)).toEqual([1, 2, 3]);
    expect(h.errors).toEqual([]);
  });

  it('accepts a line of exactly the limit and refuses one byte more with -32600, id null, then reads on', async () => {
    const line = ping(7);
    const h = await harness(line.length);
    await h.feed(line + '\n');
    expect(h.messages).toHaveLength(1);

    const longer = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'pingg' });
    expect(longer.length).toBe(line.length + 1);
    // Sent in small pieces: the refusal comes once its newline arrives, and the line after it is read normally.
    await h.feed(...longer.match(/.{1,4}/g)!, '\n', ping(8) + '\n');
    expect(h.oversized).toEqual([line.length + 1]);
    expect(h.replies()).toEqual([
      {
        jsonrpc: '2.0',
        id: null,
        error: { code: -32600, message: expect.stringContaining(`limit of ${line.length} bytes`) },
      },
    ]);
    expect(h.messages.map((m) => (m as { id: number }).id)).toEqual([7, 8]);
  });

  it('reports a line that is not JSON-RPC as an error without answering it, as the SDK transport does', async () => {
    const h = await harness(1024);
    await h.feed('not json\n', ping(1) + '\n');
    expect(h.errors).toHaveLength(1);
    expect(h.replies()).toEqual([]);
    expect(h.messages).toHaveLength(1);
  });

  it('sends messages as lines and stops reading once closed', async () => {
    const h = await harness(1024);
    let closed = false;
    h.transport.onclose = () => void (closed = true);
    await h.transport.send({ jsonrpc: '2.0', id: 1, result: {} });
    expect(h.replies()).toEqual([{ jsonrpc: '2.0', id: 1, result: {} }]);
    await h.transport.close();
    await h.feed(ping(2) + '\n');
    expect(closed).toBe(true);
    expect(h.messages).toEqual([]);
  });
});
