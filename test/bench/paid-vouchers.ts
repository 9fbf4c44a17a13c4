/**
 * The voucher side of the batch-settlement comparison: one channel per payer and per server, opened by a real
 * deposit through the server (the official client's deposit payload, settled by the facilitator on the local chain),
 * then cumulative vouchers signed ahead by the official client (@x402/evm batch-settlement client scheme, its channel
 * state stepped forward between signatures). A channel's vouchers must arrive in order, so each autocannon connection
 * takes one channel for a run and sends that channel's vouchers one after the other (PaymentPool.take with the
 * connection's context); each run gives every connection the same number of calls.
 */
import { decodePaymentResponseHeader } from '@x402/core/http';
import type { PaymentPayload, PaymentRequired } from '@x402/core/types';
import { InMemoryClientChannelStorage } from '@x402/evm/batch-settlement/client';
import Database from 'libsql';
import type { PrivateKeyAccount } from 'viem/accounts';
import { batchPayer, payloadChannel, type BatchPayer } from '../support/chain/batch-settlement-parties.js';
import type { LocalChain } from '../support/chain/node.js';
import { encodePayment } from '../support/payer.js';
import { CALL_BODY, PaymentPool } from './paid-load.js';
import { paymentRequired } from './paid-servers.js';

/** One payer's channel with one server, and the vouchers signed ahead for it. */
interface Channel {
  payer: BatchPayer;
  storage: InMemoryClientChannelStorage;
  required: PaymentRequired;
  channelId: string;
  /** Cumulative amount of the last voucher signed. */
  signed: bigint;
  ready: Array<{ header: string; key: string }>;
}

/** Deposits bound the vouchers a channel can carry: 200,000 calls' price each (the payers are minted enough). */
const DEPOSIT_CALLS = 200_000n;

/** A paid POST /api/annuity; returns the decoded receipt, or throws with the answer. */
async function pay(serverUrl: string, payload: PaymentPayload) {
  const res = await fetch(`${serverUrl}/api/annuity`, {
    method: 'POST',
    body: CALL_BODY,
    headers: { 'content-type': 'application/json', 'payment-signature': encodePayment(payload) },
  });
  const text = await res.text();
  const receipt = res.headers.get('payment-response');
  if (res.status !== 200 || !receipt) throw new Error(`deposit call answered ${res.status}: ${text.slice(0, 300)}`);
  return decodePaymentResponseHeader(receipt);
}

/** Vouchers signed ahead for one server's channels, handed out per connection and in order per channel. */
export class VoucherPool extends PaymentPool {
  readonly paymentHeader = 'payment-signature';
  readonly receiptHeader = 'payment-response';
  override readonly settlementsPerCall = 0;
  private readonly channels: Channel[] = [];
  private readonly channelOfPayer = new Map<string, string>();
  private claimed = 0;
  private quota = 0;
  /** Paid calls that opened the channels (each a deposit settled through the facilitator). */
  deposits = 0;

  constructor(
    private readonly price: bigint,
    readonly serverUrl: string,
  ) {
    super();
  }

  /** Opens one channel per payer with a deposit through the server, one after the other (one relayer nonce). */
  async open(chain: LocalChain, payers: readonly PrivateKeyAccount[]): Promise<void> {
    for (const account of payers) {
      const storage = new InMemoryClientChannelStorage();
      const payer = batchPayer({ chain }, account, { deposit: this.price * DEPOSIT_CALLS, storage });
      const required = await paymentRequired(this.serverUrl);
      const payload = await payer.client.createPaymentPayload(required);
      const settleResponse = await pay(this.serverUrl, payload);
      await payer.client.handlePaymentResponse({
        paymentPayload: payload,
        requirements: payload.accepted,
        settleResponse,
      });
      const channelId = payloadChannel(payload).channelId.toLowerCase();
      const state = await storage.get(channelId);
      if (!state?.chargedCumulativeAmount) throw new Error(`no client channel state after the deposit of ${channelId}`);
      this.channels.push({
        payer,
        storage,
        required,
        channelId,
        signed: BigInt(state.chargedCumulativeAmount),
        ready: [],
      });
      this.channelOfPayer.set(account.address.toLowerCase(), channelId);
      this.deposits++;
    }
  }

  /** Signs until every channel has `count / channels` vouchers waiting (rounded up). */
  async fill(count: number): Promise<void> {
    const each = Math.ceil(count / this.channels.length);
    for (const ch of this.channels) await this.sign(ch, each);
  }

  /** Signs until the first channel (the one a single connection takes) has `count` vouchers waiting. */
  async fillFirst(count: number): Promise<void> {
    await this.sign(this.channels[0]!, count);
  }

  private async sign(ch: Channel, count: number): Promise<void> {
    while (ch.ready.length < count) {
      const state = (await ch.storage.get(ch.channelId)) ?? {};
      await ch.storage.set(ch.channelId, { ...state, chargedCumulativeAmount: ch.signed.toString() });
      const payload = await ch.payer.client.createPaymentPayload(ch.required);
      const type = (payload.payload as { type?: string }).type;
      if (type !== 'voucher')
        throw new Error(`the client signed a ${type} instead of a voucher: ${JSON.stringify(state)}`);
      ch.signed += this.price;
      const header = encodePayment(payload);
      ch.ready.push({ header, key: `${ch.channelId}:${ch.signed}` });
      this.headers.push(header);
    }
  }

  /** Each connection gets `amount / connections` calls and a channel of its own (a channel per connection). */
  override startRun(amount: number, connections: number): number {
    if (amount % connections !== 0) throw new Error(`${amount} calls do not split over ${connections} connections`);
    if (connections > this.channels.length)
      throw new Error(`${connections} connections for ${this.channels.length} channels`);
    this.claimed = 0;
    this.quota = amount / connections;
    return this.quota + 1;
  }

  override take(context?: Record<string, unknown>): string | undefined {
    const ctx = (context ?? {}) as { channel?: number; sent?: number };
    ctx.sent = (ctx.sent ?? 0) + 1;
    if (ctx.sent > this.quota) return undefined; // built after the connection's last call: never sent
    ctx.channel ??= this.claimed++;
    const voucher = this.channels[ctx.channel]?.ready.shift();
    if (!voucher) {
      this.starved++;
      return undefined;
    }
    this.txs.push(voucher.key as `0x${string}`);
    this.head = this.txs.length;
    return voucher.header;
  }

  /** A voucher receipt: success only when voucher-only (no transaction) and charged the price; named by channel and cumulative amount. */
  receiptOf(raw: string): { success?: boolean; transaction?: string } {
    const r = decodePaymentResponseHeader(raw) as {
      success?: boolean;
      transaction?: string;
      payer?: string;
      extra?: { chargedAmount?: string; channelState?: { channelId?: string; chargedCumulativeAmount?: string } };
    };
    const state = r.extra?.channelState;
    const channel = state?.channelId?.toLowerCase() ?? this.channelOfPayer.get(r.payer?.toLowerCase() ?? '');
    return {
      success: r.success === true && r.transaction === '' && r.extra?.chargedAmount === this.price.toString(),
      transaction: `${channel}:${state?.chargedCumulativeAmount}`,
    };
  }
}

/** What Tollbooth's SQLite store holds after the runs: voucher and deposit receipts, and the channels' charged sum. */
export function storeCharges(dataDir: string): { vouchers: number; deposits: number; charged: bigint } {
  const db = new Database(`${dataDir}/tollbooth.db`, { readonly: true });
  try {
    const kinds = db
      .prepare(`SELECT kind, COUNT(*) AS n FROM receipts WHERE status = 'settled' GROUP BY kind`)
      .all() as Array<{
      kind: string;
      n: number;
    }>;
    const channels = db.prepare(`SELECT charged FROM batch_channels`).all() as Array<{ charged: string }>;
    return {
      vouchers: Number(kinds.find((k) => k.kind === 'voucher')?.n ?? 0),
      deposits: Number(kinds.find((k) => k.kind === 'deposit')?.n ?? 0),
      charged: channels.reduce((n, c) => n + BigInt(c.charged), 0n),
    };
  } finally {
    db.close();
  }
}
