import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { mainThreadTurns } from './turns.js';

/** Bodies from this size on are parsed in a turn of their own (src/limits/turns.ts); smaller ones at once. */
export const TURN_BODY_BYTES = 64 * 1024;

type Verify = (req: Request, res: Response, buf: Buffer, encoding: string) => void;

/** Whether a request's body is large, uncompressed UTF-8 JSON by its headers: the kind read in a turn. */
function readInTurn(req: Request): boolean {
  const length = Number(req.header('content-length') ?? 0);
  if (!(length >= TURN_BODY_BYTES)) return false;
  const coding = (req.header('content-encoding') ?? 'identity').trim().toLowerCase();
  if (coding !== 'identity') return false;
  const contentType = req.header('content-type') ?? '';
  const media = (contentType.split(';', 1)[0] ?? '').trim().toLowerCase();
  if (media !== 'application/json') return false;
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(contentType)?.[1]?.toLowerCase();
  return charset === undefined || charset === 'utf-8' || charset === 'utf8';
}

/** The error body-parser raises for a body that is not JSON, so the same refusal answers it. */
function parseFailed(cause: unknown): Error {
  const message = cause instanceof Error ? cause.message : 'invalid JSON';
  return Object.assign(new SyntaxError(message), { type: 'entity.parse.failed', status: 400, expose: true });
}

/** Parses the raw body read by `express.raw` as JSON in a main-thread turn, as `express.json` would have. */
async function parseInTurn(req: Request, strict: boolean, next: NextFunction): Promise<void> {
  const raw: unknown = req.body;
  if (!Buffer.isBuffer(raw)) return next();
  await mainThreadTurns.take();
  const decoded = raw.toString('utf8');
  const text = decoded.charCodeAt(0) === 0xfeff ? decoded.slice(1) : decoded;
  const first = text.trimStart().charAt(0);
  if (strict && first !== '{' && first !== '[') return next(parseFailed(new SyntaxError('not an object or array')));
  try {
    req.body = JSON.parse(text);
  } catch (cause) {
    return next(parseFailed(cause));
  }
  next();
}

/**
 * `express.json`, except that a large uncompressed UTF-8 body is read raw and
 * parsed in a main-thread turn, so a burst of large bodies does not hold up the requests that arrive beside it.
 * Limits, refusals and error types are `express.json`'s in both cases.
 */
export function turnTakingJson(options: {
  limit: number | string;
  strict?: boolean;
  type?: () => boolean;
  verify?: Verify;
}): RequestHandler {
  const strict = options.strict ?? true;
  const json = express.json({ ...options, strict });
  const raw = express.raw({ limit: options.limit, type: () => true, verify: options.verify });
  return (req, res, next) => {
    if (!readInTurn(req)) return json(req, res, next);
    raw(req, res, (err?: unknown) => {
      if (err) return next(err);
      parseInTurn(req, strict, next).catch(next);
    });
  };
}
