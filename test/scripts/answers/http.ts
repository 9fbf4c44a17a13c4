/** A raw HTTP client for the answer recorder: exact status, header names, order and body bytes (fetch hides them). */
import { Agent, request } from 'node:http';

/** What was asked: method, path (with query), headers in order, body text. */
export interface AskedRequest {
  method: string;
  path: string;
  headers: Array<[string, string]>;
  body?: string;
}

/** One raw answer: status line, headers as sent (name case and order kept), body bytes. */
export interface RawAnswer {
  status: number;
  statusText: string;
  headers: Array<[string, string]>;
  body: Buffer;
}

/** Sends requests to one server over a keep-alive agent of its own. */
export class RawClient {
  private readonly agent = new Agent({ keepAlive: true, maxSockets: 1 });

  constructor(readonly baseUrl: string) {}

  /** Sends one request and reads the whole answer. */
  send(asked: AskedRequest): Promise<RawAnswer> {
    const url = new URL(asked.path, this.baseUrl);
    const headers: Array<[string, string]> = [['host', url.host], ...asked.headers];
    if (asked.body !== undefined && !headers.some(([k]) => k.toLowerCase() === 'content-length'))
      headers.push(['content-length', String(Buffer.byteLength(asked.body))]);
    return new Promise((resolve, reject) => {
      const req = request(
        {
          agent: this.agent,
          host: url.hostname,
          port: url.port,
          method: asked.method,
          path: url.pathname + url.search,
          headers: headers.flat(),
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('error', reject);
          res.on('end', () => {
            const raw = res.rawHeaders;
            const pairs: Array<[string, string]> = [];
            for (let i = 0; i < raw.length; i += 2) pairs.push([raw[i]!, raw[i + 1]!]);
            resolve({
              status: res.statusCode ?? 0,
              statusText: res.statusMessage ?? '',
              headers: pairs,
              body: Buffer.concat(chunks),
            });
          });
        },
      );
      req.setTimeout(60_000, () => req.destroy(new Error(`no answer to ${asked.method} ${asked.path} in 60 s`)));
      req.on('error', reject);
      req.end(asked.body);
    });
  }

  /** Closes the kept-alive connections. */
  close(): void {
    this.agent.destroy();
  }
}

/** The value of a header of an answer (first one, any case). */
export function headerOf(answer: RawAnswer, name: string): string | undefined {
  return answer.headers.find(([k]) => k.toLowerCase() === name.toLowerCase())?.[1];
}

/** JSON request headers with optional extras, in a fixed order. */
export function jsonHeaders(extra: Array<[string, string]> = []): Array<[string, string]> {
  return [['content-type', 'application/json'], ...extra];
}
