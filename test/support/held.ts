import { z } from 'zod';
import { defineTool, type AnyToolDefinition } from '../../src/tool/tool.js';

/** A paid test tool whose handler the test holds open, so a call can be caught in the middle. */
export interface HeldTool {
  tool: AnyToolDefinition;
  /** Resolves when the handler of the next held call has started. */
  started(): Promise<void>;
  /** Lets the held call (and every later one) finish. */
  release(): void;
  /** How many handler runs finished (returned their output). */
  readonly finished: number;
}

/**
 * Builds a held tool at POST /api/test/<name> (0.001 USDC). `until: 'released'` ignores cancellation (a handler that
 * cannot stop early); `until: 'aborted'` also returns, normally, once its call's signal aborts.
 */
export function heldTool(name: string, until: 'released' | 'aborted' = 'released'): HeldTool {
  let onStart: () => void = () => {};
  let started = new Promise<void>((resolve) => (onStart = resolve));
  let release: () => void = () => {};
  const released = new Promise<void>((resolve) => (release = resolve));
  let finished = 0;
  const tool = defineTool({
    name,
    title: name,
    description: 'Test tool held open by the test.',
    group: 'tools',
    method: 'POST',
    path: `/api/test/${name}`,
    input: z.object({}),
    output: z.object({ done: z.boolean() }),
    pricing: { usd: '0.001', accepts: 'every-network' },
    annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
    handler: async (_input, ctx) => {
      onStart();
      started = new Promise<void>((resolve) => (onStart = resolve));
      const aborted = new Promise<void>((resolve) => {
        if (until === 'aborted') ctx.signal.addEventListener('abort', () => resolve(), { once: true });
      });
      await Promise.race([released, aborted]);
      finished += 1;
      return { done: true };
    },
  }) as AnyToolDefinition;
  return {
    tool,
    started: () => started,
    release: () => release(),
    get finished() {
      return finished;
    },
  };
}

/** A reverse proxy in front of a look-alike upstream that holds chosen requests until the test releases them. */
export interface HoldingProxy {
  url: string;
  /** Resolves when the next chosen request arrived (and is being held). */
  held(): Promise<void>;
  /** Resolves when the client of a held request gave up on it (closed the connection) before it was answered. */
  abandoned(): Promise<void>;
  /** Forwards every held request, and every later one at once. */
  release(): void;
  stop(): Promise<void>;
}

/** Starts a holding proxy on 127.0.0.1 forwarding to `target`; `hold` picks the requests to hold by their JSON body. */
export async function startHoldingProxy(target: string, hold: (body: unknown) => boolean): Promise<HoldingProxy> {
  const { createServer } = await import('node:http');
  let released = false;
  let release: () => void = () => {};
  const open = new Promise<void>((resolve) => (release = resolve));
  let onHeld: () => void = () => {};
  let heldNext = new Promise<void>((resolve) => (onHeld = resolve));
  let onAbandoned: () => void = () => {};
  const abandonedNext = new Promise<void>((resolve) => (onAbandoned = resolve));
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      void (async () => {
        const body = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown;
        try {
          parsed = JSON.parse(body);
        } catch {
          parsed = undefined;
        }
        if (!released && hold(parsed)) {
          res.once('close', () => !res.writableEnded && onAbandoned());
          onHeld();
          heldNext = new Promise<void>((resolve) => (onHeld = resolve));
          await open;
        }
        if (res.destroyed) return;
        const answer = await fetch(target + (req.url ?? '/'), {
          method: req.method ?? 'GET',
          headers: { 'content-type': 'application/json' },
          ...(body ? { body } : {}),
        });
        res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
        res.end(await answer.text());
      })().catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    held: () => heldNext,
    abandoned: () => abandonedNext,
    release: () => {
      released = true;
      release();
    },
    stop: async () => {
      release();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
