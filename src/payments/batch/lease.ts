/**
 * The lease of a paid call's channel reservation. The official server scheme reserves a channel when it verifies a
 * payment (its `pendingRequest`), for the entry's `maxTimeoutSeconds` (300 s in our challenges), so that a second
 * request on the channel waits; a reservation left by a dead process (`kill -9`) would block its channel that long.
 * Here a new reservation lasts BATCH_RESERVATION_LEASE seconds from its write, and the instance running the call
 * renews it every third of a lease until the call ends (its charge committed, its reservation released, its deposit
 * or refund settled): a live call keeps its channel, and a dead instance's reservation lapses within one lease.
 * Money is safe either way: a charge is committed only under the reservation's own `pendingId` (the scheme's check),
 * so a call whose reservation lapsed and was taken is refused its charge, never charged twice.
 */
import type { PaymentPayload } from '@x402/core/types';
import type { ChannelStorage } from '@x402/evm/batch-settlement/server';
import type { Logger } from '../../shared/log.js';
import type { BatchChannels, ChannelRecord } from '../../store/channels.js';
import type { ProcessOwner } from './owner.js';
import { officialChannelStorage } from './storage.js';

/** The longest one call's reservation is renewed: longer than any call runs, so a call lost track of stops holding. */
const MAX_RENEWED_MS = 15 * 60_000;

/**
 * A record about to be written: a reservation new in it (another `pendingId`) expires at most one lease from now and
 * names this process as its holder.
 */
function leased(
  next: ChannelRecord | undefined,
  current: ChannelRecord | undefined,
  leaseMs: number,
  owner: string | undefined,
): ChannelRecord | undefined {
  const pending = next?.pendingRequest;
  if (!next || !pending || pending.pendingId === current?.pendingRequest?.pendingId) return next;
  const { owner: _copied, ...reservation } = pending;
  const expiresAt = Math.min(pending.expiresAt, Date.now() + leaseMs);
  return { ...next, pendingRequest: { ...reservation, expiresAt, ...(owner && { owner }) } };
}

/** The channel as a decision sees it: a reservation whose holder is known to be gone has lapsed (holds nothing). */
function heldOnlyByLiving(current: ChannelRecord | undefined, owner: ProcessOwner): ChannelRecord | undefined {
  const pending = current?.pendingRequest;
  if (!current || !pending || pending.expiresAt <= Date.now() || !owner.gone(pending.owner)) return current;
  return { ...current, pendingRequest: { ...pending, expiresAt: 0 } };
}

/** A reservation this instance holds for a call that is running here. */
interface Held {
  channelId: string;
  pendingId: string;
  /** Epoch milliseconds after which it is no longer renewed. */
  until: number;
}

/** The reservations' lease over the store's channels, and the renewals of the calls this instance runs. */
export class ReservationLeases {
  private readonly held = new Map<PaymentPayload, Held>();
  /** One timer renews every held reservation, running only while some call holds one. */
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly channels: BatchChannels,
    /** BATCH_RESERVATION_LEASE in milliseconds. */
    private readonly leaseMs: number,
    private readonly log: Logger,
    /** This process as the holder of the reservations it writes, and the judge of others' (./owner.ts). */
    private readonly owner: ProcessOwner,
  ) {}

  /**
   * The store's channels as the official scheme's storage: every reservation it writes is bounded by the lease and
   * names this process; one whose holder is known to be gone (a killed process on this machine) has lapsed.
   */
  storage(): ChannelStorage {
    const { channels, leaseMs, owner } = this;
    return officialChannelStorage({
      get: (channelId) => channels.get(channelId),
      list: () => channels.list(),
      updateChannel: (channelId, update) =>
        channels.updateChannel(channelId, (current) => {
          const seen = heldOnlyByLiving(current, owner);
          const decided = update(seen);
          // Left as it was seen: left as it is stored (a lapsed reservation is not written for that alone).
          return leased(decided === seen ? current : decided, current, leaseMs, owner.token);
        }),
    });
  }

  /** Renews the reservation `pendingId` of a channel, written for `payload`'s call, until {@link end} (or it is gone). */
  hold(payload: PaymentPayload, channelId: string, pendingId: string): void {
    if (this.held.has(payload)) return;
    this.held.set(payload, { channelId, pendingId, until: Date.now() + MAX_RENEWED_MS });
    if (this.timer) return;
    this.timer = setInterval(() => this.renewAll(), Math.max(200, Math.floor(this.leaseMs / 3)));
    this.timer.unref();
  }

  /** Stops renewing the reservation of `payload`'s call (its call ended). */
  end(payload: PaymentPayload): void {
    this.held.delete(payload);
    if (this.held.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }

  /** One round: each held reservation, if still its call's, expires one lease from now; the others are let go. */
  private renewAll(): void {
    const now = Date.now();
    for (const [payload, { channelId, pendingId, until }] of this.held) {
      if (now > until) {
        this.end(payload);
        continue;
      }
      this.renew(channelId, pendingId).then(
        (held) => {
          if (!held) this.end(payload);
        },
        (err: unknown) =>
          this.log.warn('renewing a channel reservation failed; it is tried again', {
            channelId,
            error: String((err as Error)?.message ?? err),
          }),
      );
    }
  }

  /** One renewal: the reservation, if still this call's, expires one lease from now; false when it is gone. */
  private async renew(channelId: string, pendingId: string): Promise<boolean> {
    let held = false;
    await this.channels.updateChannel(channelId, (current) => {
      const pending = current?.pendingRequest;
      held = pending?.pendingId === pendingId;
      if (!current || !pending || !held) return current;
      return { ...current, pendingRequest: { ...pending, expiresAt: Date.now() + this.leaseMs } };
    });
    return held;
  }
}
