/**
 * The baseline of the start-up and memory figures of `npm run bench:paid`: a bare express 5 process answering
 * POST /api/annuity with a fixed small 402 JSON (no payment logic at all). Environment: PORT.
 */
import express from 'express';

const body = JSON.stringify({ x402Version: 2, error: 'Payment required', accepts: [] });
const app = express();
app.post('/api/annuity', (_req, res) => {
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.status(402).end(body);
});
const server = app.listen(Number(process.env.PORT ?? 0), '127.0.0.1');
process.on('SIGTERM', () => server.close(() => process.exit(0)));
