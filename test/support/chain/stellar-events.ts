/** The look-alike Soroban RPC's (stellar-rpc.ts) event and ledger-history answers: `getEvents` and Horizon's `GET /ledgers`. */
import { Address, xdr } from '@stellar/stellar-sdk';
import type { LookAlikeLedger } from './stellar-ledger.js';

/** A transaction that reached a ledger, as `getTransaction` and `getEvents` answer it. */
export interface TxRecord {
  status: 'SUCCESS' | 'FAILED';
  ledger: number;
  createdAt: number;
  envelopeXdr: string;
  resultXdr: string;
  resultMetaXdr: string;
  events: xdr.ContractEvent[];
}

/** The parameters of `getEvents`. */
export interface EventsRequest {
  startLedger: number;
  endLedger?: number;
  filters?: { type?: string; contractIds?: string[]; topics?: string[][] }[];
  pagination?: { limit?: number };
}

/** A JSON-RPC error answer (code and message). */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** What `getEvents` reads: the ledger, the oldest ledger kept, and the included transactions by hash. */
export interface RpcState {
  ledger: LookAlikeLedger;
  oldestLedger: number;
  txs: ReadonlyMap<string, TxRecord>;
}

/** Contract events of included transactions in [startLedger, endLedger), matched by contract id and topic patterns (`*` = any). */
export function contractEvents(rpc: RpcState, req: EventsRequest): unknown {
  const { ledger: l, oldestLedger, txs } = rpc;
  if (req.startLedger < oldestLedger || req.startLedger > l.sequence)
    throw new RpcError(
      -32600,
      `startLedger must be between the oldest ledger: ${oldestLedger} and the latest ledger: ${l.sequence}`,
    );
  const end = req.endLedger ?? l.sequence + 1;
  const matches = (contract: string, topics: string[]) =>
    (req.filters ?? []).length === 0 ||
    (req.filters ?? []).some(
      (f) =>
        (!f.contractIds || f.contractIds.includes(contract)) &&
        (!f.topics ||
          f.topics.some((p) => p.length === topics.length && p.every((seg, i) => seg === '*' || seg === topics[i]))),
    );
  const events = [...txs.entries()].flatMap(([txHash, tx]) =>
    tx.ledger >= req.startLedger && tx.ledger < end
      ? tx.events.flatMap((event, i) => {
          const contractId = Address.fromScAddress(xdr.ScAddress.scAddressTypeContract(event.contractId()!)).toString();
          const topic = event
            .body()
            .v0()
            .topics()
            .map((t) => t.toXDR('base64'));
          if (!matches(contractId, topic)) return [];
          const closedAt = new Date(tx.createdAt * 1000).toISOString();
          return [
            {
              id: `${tx.ledger}-${i}`,
              type: 'contract',
              ledger: tx.ledger,
              ledgerClosedAt: closedAt,
              contractId,
              transactionIndex: 1,
              operationIndex: 0,
              inSuccessfulContractCall: true,
              txHash,
              topic,
              value: event.body().v0().data().toXDR('base64'),
            },
          ];
        })
      : [],
  );
  const limited = events.slice(0, req.pagination?.limit ?? 100);
  return {
    events: limited,
    cursor: '',
    latestLedger: l.sequence,
    oldestLedger,
    latestLedgerCloseTime: String(l.closeTime),
    oldestLedgerCloseTime: String(l.closeTime),
  };
}

/** `getTransaction`'s answer for a hash: the included transaction with its events, or NOT_FOUND. */
export function transactionAnswer(rpc: RpcState, hash: string): unknown {
  const { ledger: l, oldestLedger, txs } = rpc;
  const base = {
    txHash: hash,
    latestLedger: l.sequence,
    latestLedgerCloseTime: String(l.closeTime),
    oldestLedger,
    oldestLedgerCloseTime: String(l.closeTime),
  };
  const record = txs.get(hash);
  if (!record) return { status: 'NOT_FOUND', ...base };
  const { events, ...rest } = record;
  return {
    ...base,
    ...rest,
    applicationOrder: 1,
    feeBump: false,
    events: { transactionEventsXdr: [], contractEventsXdr: [events.map((e) => e.toXDR('base64'))] },
  };
}

/** Horizon's `GET /ledgers` answer: the latest `limit` ledgers (at most 200) with their close times. */
export function horizonLedgers(l: LookAlikeLedger, limit: number): unknown {
  const records = Array.from({ length: Math.min(Math.max(limit, 1), 200) }, (_, i) => ({
    sequence: l.sequence - i,
    closed_at: new Date((l.closeTime - 5 * i) * 1000).toISOString(),
    _links: { self: { href: `/ledgers/${l.sequence - i}` } },
  }));
  return {
    _links: { self: { href: '/ledgers' }, next: { href: '/ledgers' }, prev: { href: '/ledgers' } },
    _embedded: { records },
  };
}
