/**
 * The claim loop's round lease, held while a round runs: taken for {@link ROUND_LEASE_MS} and renewed every third of
 * that, so another instance starts a round only once this one ended or stopped renewing. A process that dies during
 * a round (`kill -9` mid-claim) leaves a lease that lapses within ROUND_LEASE_MS of its last renewal; the next round
 * then closes the operation rows it left pending (./op-ledger.ts). Renewal is a compare-and-set on the lease's expiry,
 * so an instance never extends a lease another one took.
 */
import type { Logger } from '../../shared/log.js';
import type { BatchUpkeep } from '../../store/batch-upkeep.js';

/** How long the round lease lasts without a renewal (a live round renews it every third of this). */
export const ROUND_LEASE_MS = 30_000;

/** One holding of a named lease by this process: taken, renewed on a timer while held, then given back. */
export class RoundLease {
  private until = 0;
  private timer: NodeJS.Timeout | undefined;
  private renewal: Promise<void> = Promise.resolve();
  /** True once the lease could be neither renewed nor taken again: another instance holds it now. */
  lost = false;

  constructor(
    private readonly upkeep: Pick<BatchUpkeep, 'takeLease' | 'renewLease' | 'releaseLease'>,
    private readonly name: string,
    private readonly log: Logger,
    private readonly ms = ROUND_LEASE_MS,
  ) {}

  /** Takes the lease at `now` (the loop's clock) if nobody holds it, and starts renewing it; resolves whether taken. */
  async take(now: number): Promise<boolean> {
    if (!(await this.upkeep.takeLease(this.name, now + this.ms, now))) return false;
    this.until = now + this.ms;
    const started = Date.now();
    this.timer = setInterval(() => {
      this.renewal = this.renewal.then(() => this.renew(now + (Date.now() - started)));
    }, this.ms / 3);
    this.timer.unref();
    return true;
  }

  /**
   * Moves the expiry on if it is still ours; if the row is gone or lapsed (a slow store), takes it again when nobody
   * else did. Never rejects: a store that does not answer is retried at the next renewal.
   */
  private async renew(now: number): Promise<void> {
    if (this.lost || this.timer === undefined) return;
    const until = now + this.ms;
    try {
      const kept =
        (await this.upkeep.renewLease(this.name, this.until, until)) ||
        (await this.upkeep.takeLease(this.name, until, now));
      if (kept) this.until = until;
      else {
        this.lost = true;
        this.log.warn('the claim round lease was taken by another instance; this round starts no further operation', {
          lease: this.name,
        });
      }
    } catch (err) {
      this.log.warn('renewing the claim round lease failed (store unreachable?); retried shortly', {
        lease: this.name,
        error: String((err as Error)?.message ?? err),
      });
    }
  }

  /** Stops renewing and gives the lease back (only if it is still ours). */
  async release(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.renewal;
    if (!this.lost) await this.upkeep.releaseLease(this.name, this.until);
  }
}
