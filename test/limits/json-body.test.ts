import type { AddressInfo } from 'node:net';
import express, { type ErrorRequestHandler } from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TURN_BODY_BYTES, turnTakingJson } from '../../src/limits/json-body.js';

/** An express app whose route echoes what each body reader made of the body, or the error type it raised. */
function app(strict: boolean) {
  const server = express();
  const answer: ErrorRequestHandler = (err: { type?: string; status?: number }, _req, res, _next) => {
    res.status(err.status ?? 500).json({ error: err.type ?? 'other' });
  };
  server.post('/turn', turnTakingJson({ limit: 4 * TURN_BODY_BYTES, strict }), (req, res) => {
    res.json({ body: req.body as unknown });
  });
  server.post('/stock', express.json({ limit: 4 * TURN_BODY_BYTES, strict }), (req, res) => {
    res.json({ body: req.body as unknown });
  });
  server.use(answer);
  return server;
}

const big = (value: string) => JSON.stringify({ text: 'x'.repeat(TURN_BODY_BYTES), value });

describe('turnTakingJson', () => {
  for (const strict of [true, false]) {
    describe(`strict ${strict}`, () => {
      let base = '';
      let close = () => {};
      beforeAll(async () => {
        const server = app(strict).listen(0, '127.0.0.1');
        await new Promise((resolve) => server.once('listening', resolve));
        base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
        close = () => server.close();
      });
      afterAll(() => close());

      const both = async (body: string, contentType = 'application/json') => {
        const send = async (path: string) => {
          const res = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': contentType }, body });
          return { status: res.status, body: (await res.json()) as unknown };
        };
        return { turn: await send('/turn'), stock: await send('/stock') };
      };

      const cases: Array<[string, string, string?]> = [
        ['a large JSON object', big('é ✓')],
        ['a large object with a byte-order mark', `\uFEFF${big('bom')}`],
        ['a large body that is not JSON', `${big('cut')}}}`],
        ['a large JSON string (not an object or array)', JSON.stringify('y'.repeat(TURN_BODY_BYTES))],
        ['a large object with an explicit UTF-8 charset', big('charset'), 'application/json; charset=utf-8'],
        ['a body over the limit', JSON.stringify({ text: 'z'.repeat(5 * TURN_BODY_BYTES) })],
        ['a small object', JSON.stringify({ small: true })],
      ];
      for (const [name, body, contentType] of cases) {
        it(`answers ${name} exactly as express.json does`, async () => {
          const { turn, stock } = await both(body, contentType);
          expect(turn).toEqual(stock);
        });
      }
    });
  }
});
