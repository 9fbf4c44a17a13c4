/**
 * The facilitator of the paid comparison (`npm run bench:paid`), in its own process: the official `x402Facilitator`
 * with the official EVM `exact` facilitator scheme, over the standard HTTP API (POST /verify, POST /settle,
 * GET /supported), on a stubbed chain. The scheme's own code runs unchanged (EIP-712 hashing, signature recovery,
 * recipient/amount/time checks, simulation call, settlement, receipt and Transfer-event check); only the chain's
 * answers come from memory, as a healthy chain would give them at once:
 * - getCode: contract code at the asset, nothing at any other address (payers are plain accounts);
 * - readContract `transferWithAuthorization` (the simulation): reverts when the nonce was used or the time window is
 *   wrong, else succeeds; `authorizationState`/`balanceOf`/`name`/`version` for the failure diagnosis;
 * - writeContract `transferWithAuthorization`: marks the nonce used (a second use reverts) and returns a transaction
 *   hash derived from (asset, from, nonce);
 * - waitForTransactionReceipt: a successful receipt with the matching ERC-20 Transfer log;
 * - verifyTypedData: the real check with viem (the scheme itself recovers the address with viem as well).
 * GET /stats answers the counters (verify/settle calls and outcomes, per scheme too, distinct settled nonces, refused
 * replays). With BATCH_RPC_URL set, the same process also serves the official `batch-settlement` facilitator scheme
 * on a real chain (batch-facilitator.mjs).
 *
 * Environment: PORT (0 = any), NETWORK (CAIP-2, eip155:<id>), ASSET, TOKEN_NAME, TOKEN_VERSION; BATCH_* (see there).
 */
import { createServer } from 'node:http';
import { x402Facilitator } from '@x402/core/facilitator';
import { SettleError, VerifyError } from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/facilitator';
import { registerBatch } from './batch-facilitator.mjs';
import { encodeAbiParameters, getAddress, keccak256, pad, toEventSelector, verifyTypedData, concat } from 'viem';

const NETWORK = process.env.NETWORK ?? 'eip155:84532';
const ASSET = getAddress(process.env.ASSET ?? '0x036CbD53842c5426634e7929541eC2318f3dCF7e');
const TOKEN_NAME = process.env.TOKEN_NAME ?? 'USDC';
const TOKEN_VERSION = process.env.TOKEN_VERSION ?? '2';
const SIGNER_ADDRESS = '0x00000000000000000000000000000000000FAc17';
const TRANSFER = toEventSelector('Transfer(address,address,uint256)');

/** Nonces used on the stubbed chain (`from:nonce`, lower case). */
const used = new Set();
/** Receipts of submitted transactions not yet waited for. */
const pendingReceipts = new Map();

const stats = {
  verify: { calls: 0, valid: 0, invalid: 0, reasons: {} },
  settle: { calls: 0, success: 0, failed: 0, reasons: {} },
  supported: 0,
  /** TCP connections accepted (a client that keeps its connections alive opens few). */
  connections: 0,
  /** Settlement transactions submitted on the stubbed chain (each with a fresh nonce). */
  chainTransfers: 0,
  /** Submissions refused by the stubbed chain because the nonce was already used. */
  chainReplaysRefused: 0,
  /** `<scheme>:<verify|settle>` -> calls. */
  byScheme: {},
};
const count = (record, key) => (record[key] = (record[key] ?? 0) + 1);

function revert(message) {
  const err = new Error(`execution reverted: ${message}`);
  err.name = 'ContractFunctionExecutionError';
  return err;
}

/** What the token contract would say about a transferWithAuthorization with these arguments. */
function checkTransfer(args) {
  const [from, , , validAfter, validBefore, nonce] = args;
  const now = BigInt(Math.floor(Date.now() / 1000));
  if (now <= BigInt(validAfter)) throw revert('FiatTokenV2: authorization is not yet valid');
  if (now >= BigInt(validBefore)) throw revert('FiatTokenV2: authorization is expired');
  const key = `${String(from).toLowerCase()}:${String(nonce).toLowerCase()}`;
  if (used.has(key)) throw revert('FiatTokenV2: authorization is used or canceled');
  return key;
}

const isAsset = (address) => address.toLowerCase() === ASSET.toLowerCase();

/** The facilitator signer: the scheme's view of the chain, answered from memory. */
const signer = {
  getAddresses: () => [SIGNER_ADDRESS],
  getCode: async ({ address }) => (isAsset(address) ? '0x6080604052348015600f57600080fd5b50' : '0x'),
  verifyTypedData: (args) => verifyTypedData(args),
  readContract: async ({ address, functionName, args = [] }) => {
    if (!isAsset(address)) throw revert('no contract at this address');
    switch (functionName) {
      case 'transferWithAuthorization':
        checkTransfer(args);
        return undefined;
      case 'authorizationState':
        return used.has(`${String(args[0]).toLowerCase()}:${String(args[1]).toLowerCase()}`);
      case 'balanceOf':
        return 10n ** 15n;
      case 'name':
        return TOKEN_NAME;
      case 'version':
        return TOKEN_VERSION;
      default:
        throw revert(`unknown function ${functionName}`);
    }
  },
  writeContract: async ({ address, functionName, args }) => {
    if (!isAsset(address) || functionName !== 'transferWithAuthorization')
      throw revert(`unexpected call ${functionName}`);
    let key;
    try {
      key = checkTransfer(args);
    } catch (err) {
      stats.chainReplaysRefused++;
      throw err;
    }
    used.add(key);
    stats.chainTransfers++;
    const [from, to, value, , , nonce] = args;
    const hash = keccak256(concat([ASSET, getAddress(from), nonce]));
    pendingReceipts.set(hash, {
      address: ASSET,
      topics: [TRANSFER, pad(getAddress(from)), pad(getAddress(to))],
      data: encodeAbiParameters([{ type: 'uint256' }], [BigInt(value)]),
      blockNumber: 1n,
      logIndex: 0,
      transactionHash: hash,
      transactionIndex: 0,
      blockHash: hash,
      removed: false,
    });
    return hash;
  },
  sendTransaction: async () => {
    throw new Error('the stubbed chain deploys no smart wallets');
  },
  waitForTransactionReceipt: async ({ hash }) => {
    const log = pendingReceipts.get(hash);
    if (!log) throw new Error(`transaction ${hash} not found`);
    pendingReceipts.delete(hash);
    return { status: 'success', transactionHash: hash, blockNumber: 1n, logs: [log] };
  },
};

const facilitator = registerBatch(new x402Facilitator().register(NETWORK, new ExactEvmScheme(signer)));

function sendJson(res, status, body) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

async function readJson(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  try {
    const parsed = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    return typeof parsed === 'object' && parsed !== null ? parsed : undefined;
  } catch {
    return undefined;
  }
}

async function answer(kind, req, res) {
  const counters = stats[kind];
  counters.calls++;
  const body = await readJson(req);
  if (!body?.paymentPayload || !body.paymentRequirements) {
    count(counters.reasons, 'invalid_request');
    sendJson(res, 400, {
      error: 'invalid_request',
      message: 'expected { x402Version, paymentPayload, paymentRequirements }',
    });
    return;
  }
  count(stats.byScheme, `${body.paymentRequirements.scheme}:${kind}`);
  try {
    if (kind === 'verify') {
      const result = await facilitator.verify(body.paymentPayload, body.paymentRequirements);
      if (result.isValid) counters.valid++;
      else (counters.invalid++, count(counters.reasons, result.invalidReason ?? '(none)'));
      sendJson(res, 200, result);
    } else {
      const result = await facilitator.settle(body.paymentPayload, body.paymentRequirements);
      if (result.success) counters.success++;
      else (counters.failed++, count(counters.reasons, result.errorReason ?? '(none)'));
      sendJson(res, 200, result);
    }
  } catch (err) {
    if (err instanceof VerifyError) {
      counters.invalid++;
      count(counters.reasons, err.invalidReason ?? 'verify_error');
      sendJson(res, err.statusCode, {
        isValid: false,
        invalidReason: err.invalidReason,
        invalidMessage: err.invalidMessage,
        payer: err.payer,
      });
    } else if (err instanceof SettleError) {
      counters.failed++;
      count(counters.reasons, err.errorReason ?? 'settle_error');
      sendJson(res, err.statusCode, {
        success: false,
        errorReason: err.errorReason,
        errorMessage: err.errorMessage,
        payer: err.payer,
        transaction: err.transaction,
        network: err.network,
      });
    } else {
      count(counters.reasons, 'internal_error');
      sendJson(res, 500, { error: 'internal_error', message: String(err?.message ?? err) });
    }
  }
}

const server = createServer((req, res) => {
  const path = (req.url ?? '/').split('?')[0];
  if (req.method === 'POST' && (path === '/verify' || path === '/settle')) {
    answer(path.slice(1), req, res).catch((err) => {
      if (!res.headersSent && !res.destroyed) sendJson(res, 500, { error: 'internal_error', message: String(err) });
    });
    return;
  }
  if (req.method === 'GET' && path === '/supported') {
    stats.supported++;
    sendJson(res, 200, facilitator.getSupported());
    return;
  }
  if (req.method === 'GET' && path === '/stats') {
    sendJson(res, 200, { ...stats, settledNonces: used.size, cpu: process.cpuUsage() });
    return;
  }
  sendJson(res, 404, { error: 'not_found' });
});
server.on('connection', () => stats.connections++);
server.keepAliveTimeout = 60_000;
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  process.stderr.write(`stub facilitator listening on http://127.0.0.1:${server.address().port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
