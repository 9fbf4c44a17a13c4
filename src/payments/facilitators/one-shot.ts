/**
 * One request to a facilitator on a connection of its own, through Node's built-in `http`/`https`: what start-up's
 * `GET /supported` uses, so that undici (over a third of the instructions a start executes) loads with the first
 * payment instead of before the first 402. Same answer shape as the pool's: status, headers, a body read as text.
 */
import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { FacilitatorTimeoutError } from '@x402/core/server';

/** The request: method, full URL, headers, an optional body and the time limit for the whole answer. */
export interface OneShotRequest {
  method: 'GET' | 'POST';
  url: URL;
  headers: Record<string, string>;
  body?: string;
  timeoutMs: number;
  /** Named in a timeout error. */
  operation: string;
  /** Largest body read; a longer one fails the request. */
  maxBytes: number;
}

/** An answer whose body is read at most once. */
export interface OneShotAnswer {
  statusCode: number;
  headers: IncomingHttpHeaders;
  body: { text(): Promise<string>; destroy(): void };
}

/** Sends the request on a fresh connection (closed after the answer); a time-out rejects with FacilitatorTimeoutError. */
export async function requestOnce(request: OneShotRequest): Promise<OneShotAnswer> {
  // https (and TLS with it) loads only for a facilitator that uses it; http is the server's own module.
  const send = request.url.protocol === 'https:' ? (await import('node:https')).request : httpRequest;
  return new Promise<OneShotAnswer>((resolve, reject) => {
    const req = send(request.url, { method: request.method, headers: request.headers, agent: false });
    let response: IncomingMessage | undefined;
    const timer = setTimeout(() => {
      const err = new FacilitatorTimeoutError(request.operation, request.timeoutMs);
      req.destroy(err);
      response?.destroy(err);
    }, request.timeoutMs);
    timer.unref();
    req.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    req.once('response', (res: IncomingMessage) => {
      response = res;
      const text = new Promise<string>((done, fail) => {
        const chunks: Buffer[] = [];
        let bytes = 0;
        res.on('data', (chunk: Buffer) => {
          bytes += chunk.length;
          if (bytes > request.maxBytes) res.destroy(new Error(`answer longer than ${request.maxBytes} bytes`));
          else chunks.push(chunk);
        });
        res.once('end', () => {
          clearTimeout(timer);
          done(Buffer.concat(chunks).toString('utf8'));
        });
        res.once('error', fail);
        res.once('close', () => clearTimeout(timer));
      });
      text.catch(() => undefined);
      resolve({
        statusCode: res.statusCode ?? 0,
        headers: res.headers,
        body: { text: () => text, destroy: () => res.destroy() },
      });
    });
    req.end(request.body);
  });
}
