/**
 * The MCP stdio server transport both stdio modes use (docs/agents.md#limits-of-the-stdio-server): newline-delimited
 * JSON-RPC like the SDK's `StdioServerTransport`, except that a line longer than {@link STDIO_MAX_LINE_BYTES} is
 * skipped up to its newline without being buffered and answered with a JSON-RPC error (`-32600`, id null), and the
 * server keeps reading. The SDK's transport closes itself on a line over its own buffer limit, which ends the process.
 */
import process from 'node:process';
import type { Readable, Writable } from 'node:stream';
import { deserializeMessage, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** The longest JSON-RPC line (bytes, without its newline) the stdio server reads: 4 MiB. */
export const STDIO_MAX_LINE_BYTES = 4 * 1024 * 1024;

/** JSON-RPC's "Invalid Request" code, answered for a line over the limit. */
export const INVALID_REQUEST = -32600;

const NEWLINE = 0x0a;

/** The JSON-RPC error line answering a line of `bytes` bytes over the limit (id null: the request was never read). */
export function oversizedLineError(bytes: number, limit: number): string {
  const message = `Invalid Request: a JSON-RPC line of ${bytes} bytes exceeds this server's limit of ${limit} bytes and was discarded unread; send smaller messages.`;
  return JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: INVALID_REQUEST, message } }) + '\n';
}

/** Options of {@link BoundedStdioServerTransport}. */
export interface BoundedStdioOptions {
  stdin?: Readable;
  stdout?: Writable;
  maxLineBytes?: number;
  /** Told of every discarded line (its size in bytes), e.g. to log it. */
  onOversizedLine?: (bytes: number) => void;
}

/** An MCP server transport over stdin/stdout that survives oversized lines (see the module comment). */
export class BoundedStdioServerTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  private readonly stdin: Readable;
  private readonly stdout: Writable;
  private readonly limit: number;
  private readonly onOversized: ((bytes: number) => void) | undefined;
  /** Pieces of the line being read, while it is within the limit. */
  private pieces: Buffer[] = [];
  /** Bytes of the line being read so far (kept counting while an oversized line is discarded). */
  private size = 0;
  private discarding = false;
  private started = false;

  constructor(options: BoundedStdioOptions = {}) {
    this.stdin = options.stdin ?? process.stdin;
    this.stdout = options.stdout ?? process.stdout;
    this.limit = options.maxLineBytes ?? STDIO_MAX_LINE_BYTES;
    this.onOversized = options.onOversizedLine;
  }

  /** Starts reading stdin. */
  async start(): Promise<void> {
    if (this.started) throw new Error('BoundedStdioServerTransport already started');
    this.started = true;
    this.stdin.on('data', this.onData);
    this.stdin.on('error', this.onStreamError);
  }

  /** Writes one message as a line, resolving once stdout accepted it. */
  send(message: JSONRPCMessage): Promise<void> {
    return this.write(serializeMessage(message));
  }

  /** Stops reading stdin and reports the transport closed. */
  async close(): Promise<void> {
    this.stdin.off('data', this.onData);
    this.stdin.off('error', this.onStreamError);
    if (this.stdin.listenerCount('data') === 0) this.stdin.pause();
    this.pieces = [];
    this.size = 0;
    this.onclose?.();
  }

  private write(text: string): Promise<void> {
    return new Promise((resolve) => {
      if (this.stdout.write(text)) resolve();
      else this.stdout.once('drain', resolve);
    });
  }

  private readonly onStreamError = (error: Error): void => {
    this.onerror?.(error);
  };

  /** Splits a chunk at its newlines; each complete line is handled, the rest kept (or only counted) for the next. */
  private readonly onData = (chunk: Buffer | string): void => {
    const data = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    let start = 0;
    while (start <= data.length) {
      const newline = data.indexOf(NEWLINE, start);
      this.take(data.subarray(start, newline === -1 ? data.length : newline));
      if (newline === -1) return;
      this.endLine();
      start = newline + 1;
    }
  };

  private take(piece: Buffer): void {
    if (piece.length === 0) return;
    this.size += piece.length;
    if (this.discarding) return;
    if (this.size > this.limit) {
      this.discarding = true;
      this.pieces = [];
      return;
    }
    this.pieces.push(piece);
  }

  private endLine(): void {
    const { size, discarding, pieces } = this;
    this.pieces = [];
    this.size = 0;
    this.discarding = false;
    if (discarding) {
      this.onOversized?.(size);
      void this.write(oversizedLineError(size, this.limit));
      return;
    }
    const line = Buffer.concat(pieces, size).toString('utf8').replace(/\r$/, '');
    let message: JSONRPCMessage;
    try {
      message = deserializeMessage(line);
    } catch (error) {
      this.onerror?.(error as Error);
      return;
    }
    this.onmessage?.(message);
  }
}
