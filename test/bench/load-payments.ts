import type { PaymentRequirements } from '@x402/core/types';
import type { PrivateKeyAccount } from 'viem/accounts';
import { encodePayment, signExactPayment } from '../support/payer.js';

/**
 * Seconds of validity a payment must still have when it is handed out; older ones are dropped (`expired`). The
 * authorizations are valid for the entry's `maxTimeoutSeconds` (300), the longest the server accepts
 * (docs/payments.md, bounded authorization windows); the load's local chain is started with blocks sharing a second's
 * timestamp, so its clock does not run ahead of the wall clock by a second per settlement and expire them early.
 */
const MIN_REMAINING_SECONDS = 60;

/** How many used payments are kept for the replay check. */
export const SAMPLE = 1000;

/**
 * Distinct, valid EIP-3009 payments for one advertised entry, signed ahead of use (autocannon's request hook is
 * synchronous) by several payers in turn, each with a fresh random nonce. A background loop keeps the pool topped up
 * while a run takes from it; every payment is handed out once, and the first ones are kept in `sample` for the replay check.
 */
export class PaymentPool {
  private ready: Array<{ payment: string; validBefore: number }> = [];
  private head = 0;
  private next = 0;
  private signing: Promise<void> | undefined;
  private stopped = false;
  /** Payments handed out so far. */
  taken = 0;
  /** The first payments handed out (PAYMENT-SIGNATURE values, at most {@link SAMPLE}), for the replay check. */
  readonly sample: string[] = [];
  /** Requests that found the pool empty (the run then outpaced the signer; they go out unpaid and are reported). */
  starved = 0;
  /** Payments dropped unused because they waited in the pool until close to their expiry. */
  expired = 0;

  constructor(
    private readonly payers: readonly PrivateKeyAccount[],
    private readonly entry: PaymentRequirements,
  ) {}

  private async signOne(): Promise<void> {
    const payer = this.payers[this.next++ % this.payers.length]!;
    const validBefore = Math.floor(Date.now() / 1000) + this.entry.maxTimeoutSeconds;
    const payment = encodePayment(await signExactPayment(payer, this.entry, { validBefore: BigInt(validBefore) }));
    this.ready.push({ payment, validBefore });
  }

  /** Signs until `count` payments are ready. */
  async fill(count: number): Promise<void> {
    while (this.available < count) await this.signOne();
  }

  /** Keeps at least `low` and at most `high` payments ready in the background until {@link stop}. */
  refill(low: number, high: number): void {
    const loop = async () => {
      while (!this.stopped) {
        if (this.available < low) {
          while (!this.stopped && this.available < high) {
            await this.signOne();
            await new Promise((r) => setImmediate(r));
          }
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    this.signing = loop();
  }

  /** Stops the background signer. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.signing;
  }

  /** A fresh payment, or `undefined` when none is ready. */
  take(): string | undefined {
    const freshUntil = Date.now() / 1000 + MIN_REMAINING_SECONDS;
    while (this.ready[this.head] !== undefined && this.ready[this.head]!.validBefore < freshUntil) {
      this.head++;
      this.expired++;
    }
    const payment = this.ready[this.head]?.payment;
    if (payment === undefined) {
      this.starved++;
      return undefined;
    }
    this.head++;
    if (this.head > 4096) {
      this.ready = this.ready.slice(this.head);
      this.head = 0;
    }
    if (this.sample.length < SAMPLE) this.sample.push(payment);
    this.taken++;
    return payment;
  }

  /** Payments signed but not handed out. */
  get available(): number {
    return this.ready.length - this.head;
  }
}
