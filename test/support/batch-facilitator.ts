import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A facilitator that lists `batch-settlement` at `/supported` and counts (and refuses) every `/verify` and `/settle`. */
export interface ListingFacilitator {
  url: string;
  /** Requests to `/verify` and `/settle`: a plain voucher on a fresh mirror must cause none. */
  calls: { verify: number; settle: number };
  close(): Promise<void>;
}

/**
 * Starts it on 127.0.0.1: `/supported` lists `exact` and `batch-settlement` (x402 v2) on `network`, the latter with
 * `receiverAuthorizer` when given; `/verify` and `/settle` answer 500, so a call that needed them fails visibly.
 */
export async function startListingFacilitator(
  network: string,
  receiverAuthorizer?: string,
): Promise<ListingFacilitator> {
  const calls = { verify: 0, settle: 0 };
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      if (req.method === 'GET' && req.url === '/supported') {
        const extra = receiverAuthorizer ? { extra: { receiverAuthorizer } } : {};
        const kinds = [
          { x402Version: 2, scheme: 'exact', network },
          { x402Version: 2, scheme: 'batch-settlement', network, ...extra },
        ];
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ kinds, extensions: [], signers: {} }));
        return;
      }
      if (req.url === '/verify') calls.verify++;
      if (req.url === '/settle') calls.settle++;
      res.writeHead(500, { 'content-type': 'application/json' }).end('{"error":"this test facilitator is not asked"}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
