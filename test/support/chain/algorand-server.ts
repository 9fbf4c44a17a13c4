import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import algosdk from 'algosdk';
import { AlgorandLedger, LedgerRejection } from './algorand-ledger.js';

const { modelsv2 } = algosdk;

/** A look-alike algod on 127.0.0.1 serving one in-memory ledger. */
export interface AlgodLookAlike {
  url: string;
  ledger: AlgorandLedger;
  /** Paths of every request received (method + path), for tests that check what was called. */
  requests: string[];
  stop(): Promise<void>;
}

/** Byte offset just past the msgpack item starting at `at` (to split algod's concatenated signed-transaction body). */
export function msgpackItemEnd(b: Uint8Array, at: number): number {
  const t = b[at];
  if (t === undefined) throw new Error('truncated msgpack');
  const u16 = (o: number) => (b[o]! << 8) | b[o + 1]!;
  const u32 = (o: number) => ((b[o]! << 24) >>> 0) + (b[o + 1]! << 16) + (b[o + 2]! << 8) + b[o + 3]!;
  const items = (start: number, n: number) => {
    let p = start;
    for (let k = 0; k < n; k++) p = msgpackItemEnd(b, p);
    return p;
  };
  if (t <= 0x7f || t >= 0xe0 || t === 0xc0 || t === 0xc2 || t === 0xc3) return at + 1;
  if (t >= 0x80 && t <= 0x8f) return items(at + 1, 2 * (t & 0x0f));
  if (t >= 0x90 && t <= 0x9f) return items(at + 1, t & 0x0f);
  if (t >= 0xa0 && t <= 0xbf) return at + 1 + (t & 0x1f);
  const fixed: Record<number, number> = {
    0xca: 5,
    0xcb: 9,
    0xcc: 2,
    0xcd: 3,
    0xce: 5,
    0xcf: 9,
    0xd0: 2,
    0xd1: 3,
    0xd2: 5,
    0xd3: 9,
    0xd4: 3,
    0xd5: 4,
    0xd6: 6,
    0xd7: 10,
    0xd8: 18,
  };
  if (fixed[t]) return at + fixed[t]!;
  switch (t) {
    case 0xc4:
    case 0xd9:
      return at + 2 + b[at + 1]!;
    case 0xc5:
    case 0xda:
      return at + 3 + u16(at + 1);
    case 0xc6:
    case 0xdb:
      return at + 5 + u32(at + 1);
    case 0xc7:
      return at + 3 + b[at + 1]!;
    case 0xc8:
      return at + 4 + u16(at + 1);
    case 0xc9:
      return at + 6 + u32(at + 1);
    case 0xdc:
      return items(at + 3, u16(at + 1));
    case 0xdd:
      return items(at + 5, u32(at + 1));
    case 0xde:
      return items(at + 3, 2 * u16(at + 1));
    case 0xdf:
      return items(at + 5, 2 * u32(at + 1));
  }
  throw new Error(`unknown msgpack type 0x${t.toString(16)}`);
}

/** Splits a body of concatenated msgpack signed transactions and decodes each. */
export function decodeSignedGroup(body: Uint8Array): algosdk.SignedTransaction[] {
  const out: algosdk.SignedTransaction[] = [];
  for (let at = 0; at < body.length;) {
    const end = msgpackItemEnd(body, at);
    out.push(algosdk.decodeSignedTransaction(body.subarray(at, end)));
    at = end;
  }
  return out;
}

async function readBody(req: IncomingMessage): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return new Uint8Array(Buffer.concat(chunks));
}

function send(
  res: ServerResponse,
  status: number,
  value: algosdk.Encodable | Record<string, unknown>,
  msgpack: boolean,
): void {
  const encodable = typeof (value as algosdk.Encodable).toEncodingData === 'function';
  if (msgpack && encodable) {
    res
      .writeHead(status, { 'content-type': 'application/msgpack' })
      .end(Buffer.from(algosdk.encodeMsgpack(value as algosdk.Encodable)));
    return;
  }
  const body = encodable
    ? algosdk.encodeJSON(value as algosdk.Encodable)
    : JSON.stringify(value, (_k, v) => (typeof v === 'bigint' ? Number(v) : v));
  res.writeHead(status, { 'content-type': 'application/json' }).end(body);
}

function status(ledger: AlgorandLedger) {
  return new modelsv2.NodeStatusResponse({
    catchupTime: 0,
    lastRound: ledger.round,
    lastVersion: 'future',
    nextVersion: 'future',
    nextVersionRound: ledger.round + 1n,
    nextVersionSupported: true,
    stoppedAtUnsupportedRound: false,
    timeSinceLastRound: 0,
  });
}

function simulate(ledger: AlgorandLedger, request: algosdk.modelsv2.SimulateRequest) {
  const groups = request.txnGroups.map((g) => {
    const txnResults = g.txns.map(
      (txn) =>
        new modelsv2.SimulateTransactionResult({
          txnResult: new modelsv2.PendingTransactionResponse({ poolError: '', txn }),
        }),
    );
    try {
      ledger.evaluate(g.txns, { allowEmptySignatures: request.allowEmptySignatures === true });
      return new modelsv2.SimulateTransactionGroupResult({ txnResults });
    } catch (err) {
      if (!(err instanceof LedgerRejection)) throw err;
      return new modelsv2.SimulateTransactionGroupResult({
        txnResults,
        failureMessage: err.message,
        failedAt: err.failedAt === undefined ? [] : [err.failedAt],
      });
    }
  });
  return new modelsv2.SimulateResponse({ version: 2, lastRound: ledger.round, txnGroups: groups });
}

function accountJson(ledger: AlgorandLedger, address: string) {
  const acct = ledger.accounts.get(address) ?? { algo: 0n, assets: new Map<bigint, bigint>() };
  return {
    address,
    amount: acct.algo,
    'amount-without-pending-rewards': acct.algo,
    'min-balance': ledger.minBalance(acct),
    'pending-rewards': 0,
    rewards: 0,
    round: ledger.round,
    status: 'Offline',
    'total-apps-opted-in': 0,
    'total-assets-opted-in': acct.assets.size,
    'total-created-apps': 0,
    'total-created-assets': 0,
    assets: [...acct.assets].map(([id, amount]) => ({ 'asset-id': id, amount, 'is-frozen': false })),
    ...(acct.authAddr ? { 'auth-addr': acct.authAddr } : {}),
  };
}

/** `POST /v2/transactions`: a signed group submitted to the ledger, refused as algod refuses it. */
async function submit(
  ledger: AlgorandLedger,
  req: IncomingMessage,
  bad: (message: string) => void,
  res: ServerResponse,
): Promise<void> {
  let group: algosdk.SignedTransaction[];
  try {
    group = decodeSignedGroup(await readBody(req));
  } catch (err) {
    return bad(`msgpack decode error: ${(err as Error).message}`);
  }
  try {
    return send(res, 200, { txId: ledger.submit(group) }, false);
  } catch (err) {
    if (err instanceof LedgerRejection) return bad(`TransactionPool.Remember: ${err.message}`);
    throw err;
  }
}

async function route(ledger: AlgorandLedger, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  const path = url.pathname;
  const msgpack = url.searchParams.get('format') === 'msgpack';
  const notFound = (message: string) => send(res, 404, { message }, false);
  const bad = (message: string) => send(res, 400, { message }, false);
  let m: RegExpMatchArray | null;
  if (req.method === 'GET' && (path === '/health' || path === '/ready')) return void res.writeHead(200).end();
  if (req.method === 'GET' && path === '/v2/status') return send(res, 200, status(ledger), msgpack);
  if (req.method === 'GET' && path.startsWith('/v2/status/wait-for-block-after/'))
    return send(res, 200, status(ledger), msgpack);
  if (req.method === 'GET' && path === '/v2/transactions/params') {
    const params = new modelsv2.TransactionParametersResponse({
      consensusVersion: 'future',
      fee: 0,
      genesisHash: ledger.genesisHash,
      genesisId: ledger.genesisId,
      lastRound: ledger.round,
      minFee: ledger.minFee,
    });
    return send(res, 200, params, msgpack);
  }
  if (req.method === 'POST' && path === '/v2/transactions') return submit(ledger, req, bad, res);
  if (req.method === 'POST' && path === '/v2/transactions/simulate') {
    const body = await readBody(req);
    const request = algosdk.decodeMsgpack(body, modelsv2.SimulateRequest);
    return send(res, 200, simulate(ledger, request), true);
  }
  if (req.method === 'GET' && (m = path.match(/^\/v2\/transactions\/pending\/([A-Z2-7]{52})$/))) {
    const found = ledger.pendingInfo(m[1]!);
    if (!found) return notFound('txn does not exist');
    const confirmed = found.round > 0n ? { confirmedRound: found.round } : {};
    return send(
      res,
      200,
      new modelsv2.PendingTransactionResponse({ poolError: '', txn: found.stxn, ...confirmed }),
      msgpack,
    );
  }
  if (req.method === 'GET' && (m = path.match(/^\/v2\/accounts\/([A-Z2-7]{58})$/)))
    return send(res, 200, accountJson(ledger, m[1]!), false);
  if (req.method === 'GET' && (m = path.match(/^\/v2\/blocks\/(\d+)\/txids$/))) {
    const round = BigInt(m[1]!);
    if (round > ledger.round) return notFound(`round ${round} is not available yet`);
    return send(res, 200, new modelsv2.BlockTxidsResponse({ blocktxids: ledger.blocks.get(round) ?? [] }), msgpack);
  }
  return notFound(`look-alike algod does not serve ${req.method} ${path}`);
}

/** Starts a look-alike algod on a free port of 127.0.0.1 for the given ledger. */
export async function startAlgodLookAlike(ledger: AlgorandLedger): Promise<AlgodLookAlike> {
  const requests: string[] = [];
  const server = createServer((req, res) => {
    requests.push(`${req.method} ${(req.url ?? '').split('?')[0]}`);
    route(ledger, req, res).catch((err: Error) => {
      if (!res.headersSent) send(res, 500, { message: err.message }, false);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    ledger,
    requests,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
