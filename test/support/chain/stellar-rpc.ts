import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Address, Keypair, StrKey, xdr, type Transaction } from '@stellar/stellar-sdk';
import { LookAlikeLedger, TRANSFER_RESOURCE_FEE, type LookAlikeToken } from './stellar-ledger.js';
import {
  contractEvents,
  horizonLedgers,
  RpcError,
  transactionAnswer,
  type EventsRequest,
  type TxRecord,
} from './stellar-events.js';
import { policyViolation, type SubmissionPolicy } from './stellar-policy.js';
import {
  accountEntry,
  ledgerCloseMeta,
  ledgerHeader,
  nonceEntry,
  PROTOCOL_VERSION,
  sorobanData,
  transactionMeta,
  transactionResult,
} from './stellar-xdr.js';

/**
 * A look-alike Soroban RPC (JSON-RPC 2.0 on 127.0.0.1) backed by {@link LookAlikeLedger}: getHealth, getNetwork,
 * getLatestLedger, getLedgerEntries, simulateTransaction, sendTransaction, getTransaction. sendTransaction checks
 * the envelope (source account, sequence, time bounds, ed25519 signature, Soroban data and fee), the
 * {@link SubmissionPolicy}, then includes the transaction in a new ledger, where the invocation runs in enforcing
 * mode (payer signature, nonce, expiration, balance) and succeeds or fails as on the real network.
 * It also answers Horizon's `GET /ledgers` (close times), which the official x402 Stellar client asks for, and
 * accepts absolute-form request targets, so an HTTP client can use it as its HTTPS_PROXY.
 */
export class LookAlikeSorobanRpc {
  readonly ledger: LookAlikeLedger;
  /** Every refused submission with its reason (tests assert on it). */
  readonly refusals: { hash: string; reason: string }[] = [];
  /** Hashes of transactions that reached a ledger, in order. */
  readonly included: string[] = [];
  /** How often each JSON-RPC method (and Horizon's `GET /ledgers`) was called. */
  readonly calls = new Map<string, number>();
  /** While true, accepted transactions wait in {@link held} instead of reaching a ledger. */
  hold = false;
  readonly held: Transaction[] = [];
  private readonly txs = new Map<string, TxRecord>();
  private readonly oldestLedger: number;
  private server?: Server;
  url = '';

  constructor(
    passphrase: string,
    private readonly policy: () => SubmissionPolicy,
  ) {
    this.ledger = new LookAlikeLedger(passphrase);
    this.oldestLedger = this.ledger.sequence;
  }

  /** Starts listening on a free port of 127.0.0.1. */
  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      void this.route(req).then(
        ({ status, body }) => {
          res.writeHead(status, { 'content-type': 'application/json' });
          res.end(JSON.stringify(body));
        },
        (err: unknown) => {
          res.writeHead(500, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ error: String(err) }));
        },
      );
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Stops the server. */
  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  /** Includes the held transactions in a ledger (in submission order) and stops holding. */
  release(): void {
    this.hold = false;
    for (const tx of this.held.splice(0)) this.include(tx);
  }

  private async route(req: IncomingMessage): Promise<{ status: number; body: unknown }> {
    const url = new URL(req.url ?? '/', 'http://look-alike');
    if (req.method === 'GET' && url.pathname === '/ledgers') this.count('horizon:/ledgers');
    if (req.method === 'GET' && url.pathname === '/ledgers')
      return { status: 200, body: horizonLedgers(this.ledger, Number(url.searchParams.get('limit') ?? 10)) };
    if (req.method !== 'POST') return { status: 404, body: { error: 'not found' } };
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const call = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
      id: unknown;
      method: string;
      params?: Record<string, unknown>;
    };
    this.count(call.method);
    try {
      return {
        status: 200,
        body: { jsonrpc: '2.0', id: call.id, result: this.dispatch(call.method, call.params ?? {}) },
      };
    } catch (err) {
      const code = err instanceof RpcError ? err.code : -32603;
      return { status: 200, body: { jsonrpc: '2.0', id: call.id, error: { code, message: (err as Error).message } } };
    }
  }

  private count(name: string): void {
    this.calls.set(name, (this.calls.get(name) ?? 0) + 1);
  }

  private dispatch(method: string, params: Record<string, unknown>): unknown {
    const l = this.ledger;
    switch (method) {
      case 'getHealth':
        return {
          status: 'healthy',
          latestLedger: l.sequence,
          oldestLedger: this.oldestLedger,
          ledgerRetentionWindow: 17_280,
        };
      case 'getNetwork':
        return { passphrase: l.passphrase, protocolVersion: PROTOCOL_VERSION };
      case 'getLatestLedger': {
        const { header, hash } = ledgerHeader(l.sequence, l.closeTime);
        return {
          id: hash.toString('hex'),
          sequence: l.sequence,
          protocolVersion: PROTOCOL_VERSION,
          closeTime: String(l.closeTime),
          headerXdr: header.toXDR('base64'),
          metadataXdr: ledgerCloseMeta(header, hash).toXDR('base64'),
        };
      }
      case 'getLedgerEntries':
        return {
          latestLedger: l.sequence,
          entries: ((params.keys as string[] | undefined) ?? []).flatMap((k) => this.entry(k)),
        };
      case 'simulateTransaction':
        return this.simulate(String(params.transaction));
      case 'sendTransaction':
        return this.send(String(params.transaction));
      case 'getTransaction':
        return transactionAnswer(
          { ledger: this.ledger, oldestLedger: this.oldestLedger, txs: this.txs },
          String(params.hash),
        );
      case 'getEvents':
        return contractEvents(
          { ledger: this.ledger, oldestLedger: this.oldestLedger, txs: this.txs },
          params as unknown as EventsRequest,
        );
      default:
        throw new RpcError(-32601, `method not found: ${method}`);
    }
  }

  private entry(rawKey: string): unknown[] {
    const key = xdr.LedgerKey.fromXDR(rawKey, 'base64');
    const l = this.ledger;
    if (key.switch().name === 'account') {
      const address = StrKey.encodeEd25519PublicKey(key.account().accountId().ed25519());
      const account = l.accounts.get(address);
      return account
        ? [{ key: rawKey, xdr: accountEntry(address, account.seq).toXDR('base64'), lastModifiedLedgerSeq: l.sequence }]
        : [];
    }
    if (key.switch().name === 'contractData' && key.contractData().key().switch().name === 'scvLedgerKeyNonce') {
      const id = `${Address.fromScAddress(key.contractData().contract()).toString()}:${key.contractData().key().nonceKey().nonce().toString()}`;
      const liveUntil = l.nonces.get(id);
      return liveUntil !== undefined && liveUntil >= l.sequence
        ? [
            {
              key: rawKey,
              xdr: nonceEntry(key).toXDR('base64'),
              lastModifiedLedgerSeq: l.sequence,
              liveUntilLedgerSeq: liveUntil,
            },
          ]
        : [];
    }
    return [];
  }

  private simulate(envelope: string): unknown {
    let tx: Transaction;
    try {
      tx = this.ledger.parse(envelope);
    } catch {
      throw new RpcError(-32602, 'invalid parameters: could not unmarshal transaction');
    }
    const run = this.ledger.execute(tx, this.ledger.sequence + 1, false);
    const latestLedger = this.ledger.sequence;
    if (!run.ok) return { error: run.error, events: [], latestLedger };
    const diagnostic = run.events.map((event) =>
      new xdr.DiagnosticEvent({ inSuccessfulContractCall: true, event }).toXDR('base64'),
    );
    return {
      transactionData: sorobanData(run.readOnly, run.readWrite, TRANSFER_RESOURCE_FEE).toXDR('base64'),
      minResourceFee: TRANSFER_RESOURCE_FEE.toString(),
      events: diagnostic,
      results: [{ auth: run.auth.map((a) => a.toXDR('base64')), xdr: xdr.ScVal.scvVoid().toXDR('base64') }],
      cost: { cpuInsns: '2400000', memBytes: '1200000' },
      latestLedger,
    };
  }

  private refuse(hash: string, code: Parameters<typeof transactionResult>[1], reason: string): unknown {
    this.refusals.push({ hash, reason });
    const diagnostic = new xdr.DiagnosticEvent({
      inSuccessfulContractCall: false,
      event: new xdr.ContractEvent({
        ext: new xdr.ExtensionPoint(0),
        contractId: null,
        type: xdr.ContractEventType.diagnostic(),
        body: new xdr.ContractEventBody(
          0,
          new xdr.ContractEventV0({ topics: [xdr.ScVal.scvSymbol('error')], data: xdr.ScVal.scvString(reason) }),
        ),
      }),
    });
    return {
      status: 'ERROR',
      hash,
      errorResultXdr: transactionResult(0n, code).toXDR('base64'),
      diagnosticEventsXdr: [diagnostic.toXDR('base64')],
      latestLedger: this.ledger.sequence,
      latestLedgerCloseTime: String(this.ledger.closeTime),
    };
  }

  private send(envelope: string): unknown {
    let tx: Transaction;
    try {
      tx = this.ledger.parse(envelope);
    } catch {
      throw new RpcError(-32602, 'invalid parameters: could not unmarshal transaction');
    }
    const hash = tx.hash().toString('hex');
    const l = this.ledger;
    const pending = { status: 'PENDING', hash, latestLedger: l.sequence, latestLedgerCloseTime: String(l.closeTime) };
    if (this.txs.has(hash) || this.held.some((h) => h.hash().toString('hex') === hash))
      return { ...pending, status: 'DUPLICATE' };
    const account = l.accounts.get(tx.source);
    if (!account) return this.refuse(hash, 'txNoAccount', `source account ${tx.source} does not exist`);
    if (BigInt(tx.sequence) !== account.seq + 1n)
      return this.refuse(hash, 'txBadSeq', `sequence ${tx.sequence} is not ${account.seq + 1n}`);
    const maxTime = Number(tx.timeBounds?.maxTime ?? 0);
    if (maxTime !== 0 && maxTime < Math.floor(Date.now() / 1000))
      return this.refuse(hash, 'txTooLate', 'the transaction expired');
    const signedBySource = tx.signatures.some((s) => Keypair.fromPublicKey(tx.source).verify(tx.hash(), s.signature()));
    if (!signedBySource) return this.refuse(hash, 'txBadAuth', 'the envelope is not signed by its source account');
    const ext = tx.toEnvelope().v1().tx().ext();
    if (ext.switch() !== 1)
      return this.refuse(hash, 'txSorobanInvalid', 'a Soroban transaction needs Soroban transaction data');
    if (BigInt(tx.fee) < ext.sorobanData().resourceFee().toBigInt() + 100n)
      return this.refuse(hash, 'txInsufficientFee', 'the fee does not cover the declared resource fee');
    const policy = policyViolation(tx, this.policy(), this.ledger.sequence);
    if (policy) return this.refuse(hash, 'txMalformed', policy);
    account.seq += 1n;
    if (this.hold) this.held.push(tx);
    else this.include(tx);
    return pending;
  }

  private include(tx: Transaction): void {
    const l = this.ledger;
    l.advance(1);
    const run = l.execute(tx, l.sequence, true);
    const hash = tx.hash().toString('hex');
    const fee = BigInt(tx.fee);
    this.txs.set(hash, {
      status: run.ok ? 'SUCCESS' : 'FAILED',
      ledger: l.sequence,
      createdAt: l.closeTime,
      envelopeXdr: tx.toEnvelope().toXDR('base64'),
      resultXdr: transactionResult(fee, run.ok ? 'success' : 'trapped').toXDR('base64'),
      resultMetaXdr: transactionMeta(run.ok ? run.events : []).toXDR('base64'),
      events: run.ok ? run.events : [],
    });
    this.included.push(hash);
  }
}

/** Balance of a holder on a look-alike token. */
export function tokenBalance(token: LookAlikeToken, holder: string): bigint {
  return token.balances.get(holder) ?? 0n;
}
