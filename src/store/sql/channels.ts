/**
 * The seller's batch-settlement channels over the SQL port, one SQL text for both dialects. Each row carries a
 * revision, a random token replaced on every write: an update reads the row, runs the caller's decision on it and
 * writes only where the revision is still the one it read (insert only where no row exists), else reads again. So one
 * channel's updates are serialized across every process on the database without holding a lock across the callback,
 * and a random revision (not a counter) cannot be confused with one from before a delete and re-create.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { BatchChannels, ChannelRecord, ChannelUpdateOutcome } from '../channels.js';
import type { SqlPort, Statement } from './port.js';

/** How many times one update may lose the race before it gives up (the scheme then answers "state unavailable"). */
const MAX_ATTEMPTS = 500;

/** The row key: channel ids are hex, compared without regard to case (as the official storages do). */
export const channelKey = (channelId: string): string => channelId.toLowerCase();

/** A row as the record it stores. */
function fromRow(row: Record<string, unknown>): ChannelRecord {
  return JSON.parse(String(row.record)) as ChannelRecord;
}

/** The columns listings read without parsing the record that never change for a channel: payer, receiver, token. */
function configColumns(next: ChannelRecord): unknown[] {
  const { payer, receiver, token } = next.channelConfig;
  return [payer.toLowerCase(), receiver.toLowerCase(), token.toLowerCase()];
}

/** The record itself and the state columns listings and metrics read without parsing it. */
function stateColumns(next: ChannelRecord): unknown[] {
  return [
    next.balance,
    next.chargedCumulativeAmount,
    next.totalClaimed,
    next.lastRequestTimestamp,
    next.pendingRequest?.expiresAt ?? null,
    JSON.stringify(next),
    new Date().toISOString(),
  ];
}

/**
 * The one conditional write that turns the state read (`revision` of `current`, or no row) into `next` (a record, or
 * none). The payer, receiver and token columns are written with the row: a channel's config never changes (its id is
 * the config's hash), so an update leaves them, and the index on them, alone.
 */
function conditionalWrite(
  key: string,
  stored: Known | undefined,
  next: ChannelRecord | undefined,
): Statement & { revision?: string } {
  if (next === undefined) {
    return {
      sql: 'DELETE FROM batch_channels WHERE channel_id = ? AND revision = ? RETURNING channel_id',
      args: [key, stored?.revision],
    };
  }
  const revision = randomUUID();
  if (stored === undefined) {
    return {
      revision,
      sql: `INSERT INTO batch_channels (channel_id, revision, payer, receiver, token, balance, charged, claimed,
              last_request_at, pending_until, record, updated_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (channel_id) DO NOTHING RETURNING channel_id`,
      args: [key, revision, ...configColumns(next), ...stateColumns(next)],
    };
  }
  if (!sameConfig(stored.channel, next)) {
    return {
      revision,
      sql: `UPDATE batch_channels SET revision = ?, payer = ?, receiver = ?, token = ?, balance = ?, charged = ?,
              claimed = ?, last_request_at = ?, pending_until = ?, record = ?, updated_at = ?
            WHERE channel_id = ? AND revision = ? RETURNING channel_id`,
      args: [revision, ...configColumns(next), ...stateColumns(next), key, stored.revision],
    };
  }
  return {
    revision,
    sql: `UPDATE batch_channels SET revision = ?, balance = ?, charged = ?, claimed = ?, last_request_at = ?,
            pending_until = ?, record = ?, updated_at = ?
          WHERE channel_id = ? AND revision = ? RETURNING channel_id`,
    args: [revision, ...stateColumns(next), key, stored.revision],
  };
}

const sameConfig = (a: ChannelRecord, b: ChannelRecord) =>
  a.channelConfig === b.channelConfig || JSON.stringify(a.channelConfig) === JSON.stringify(b.channelConfig);

/** A channel row as this process last read or wrote it. */
interface Known {
  revision: string;
  channel: ChannelRecord;
}

/** How many channels' last known rows a process keeps (the oldest is forgotten first). */
const KNOWN_LIMIT = 10_000;

/**
 * True when a write must survive a power loss before its caller answers: it changes what was charged or claimed, the
 * on-chain view, a signature kept apart from a reservation, or the channel's existence. A reservation (with the
 * voucher it holds) or its release need not: losing it to a power loss releases the channel, the call it held was
 * never answered, and the charge that follows it writes that voucher again and waits for the disk itself (a WAL
 * fsync covers every write before it).
 */
export function writeMustBeDurable(current: ChannelRecord | undefined, next: ChannelRecord | undefined): boolean {
  if (!current || !next) return true;
  const before = current as unknown as Record<string, unknown>;
  const after = next as unknown as Record<string, unknown>;
  const reserving =
    next.pendingRequest !== undefined && next.pendingRequest.pendingId !== current.pendingRequest?.pendingId;
  const losable = reserving ? RESERVATION : NOT_MONEY;
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (losable.has(key) || before[key] === after[key]) continue;
    // A field the update copied keeps its value (the same reference); anything else is compared by value.
    if (JSON.stringify(before[key]) !== JSON.stringify(after[key])) return true;
  }
  return false;
}

/** The record fields a reservation or its release changes, which a power loss may lose (see writeMustBeDurable). */
const NOT_MONEY: ReadonlySet<string> = new Set(['pendingRequest', 'lastRequestTimestamp', 'onchainSyncedAt']);

/** What a new reservation may change without the disk: the above and the voucher it holds until its charge. */
const RESERVATION: ReadonlySet<string> = new Set([...NOT_MONEY, 'signature', 'signedMaxClaimable']);

/**
 * The batch-settlement channels of one database (see {@link BatchChannels}). An update first tries the row this
 * process last read or wrote (its revision makes the write conditional, so a stale copy is never written over a newer
 * row); a decision to leave the channel alone, and every retry, is made on a fresh read.
 */
export function sqlBatchChannels(port: SqlPort): BatchChannels {
  const known = new Map<string, Known>();
  const remember = (key: string, state: Known | undefined) => {
    known.delete(key);
    if (state) known.set(key, state);
    if (known.size > KNOWN_LIMIT) known.delete(known.keys().next().value!);
  };
  const read = async (key: string) => {
    const [row] = await port.read('SELECT revision, record FROM batch_channels WHERE channel_id = ?', [key]);
    const state = row ? { revision: String(row.revision), channel: fromRow(row) } : undefined;
    remember(key, state);
    return state;
  };
  /** One try on `stored`: the outcome, or undefined when the row moved on (or a no-op was decided on a copy). */
  const attempt = async (key: string, stored: Known | undefined, fresh: boolean, update: Update) => {
    const current = stored?.channel;
    const next = update(current);
    const unchanged = next === current || (next === undefined && stored === undefined);
    if (unchanged) return fresh ? { channel: current, status: 'unchanged' as const } : undefined;
    const write = conditionalWrite(key, stored, next);
    const written = await port.write(write.sql, write.args);
    if (written.rows.length !== 1) return undefined;
    remember(key, next && { revision: write.revision!, channel: next });
    // The answer that follows may promise the charge: it must outlive a crash first.
    if (writeMustBeDurable(current, next)) await port.durable();
    return next === undefined
      ? { channel: undefined, status: 'deleted' as const }
      : { channel: next, status: 'updated' as const };
  };
  return {
    async get(channelId) {
      return (await read(channelKey(channelId)))?.channel;
    },
    async list() {
      const rows = await port.read('SELECT record FROM batch_channels ORDER BY channel_id');
      return rows.map(fromRow);
    },
    async updateChannel(channelId, update): Promise<ChannelUpdateOutcome> {
      const key = channelKey(channelId);
      const copy = known.get(key);
      // A decision on a stale copy that throws is made again on a fresh read, which decides.
      const first = copy && (await attempt(key, copy, false, onCopy(update)));
      if (first) return first;
      for (let tries = 1; tries <= MAX_ATTEMPTS; tries++) {
        const done = await attempt(key, await read(key), true, update);
        if (done) return done;
        // Another writer got there first: back off a little (more as the race goes on) and decide again on its state.
        await sleep(Math.random() * Math.min(tries, 20));
      }
      throw new Error(`channel ${key} is too contended to update; retry the request`);
    },
  };
}

/** A caller's decision on the stored channel (see {@link BatchChannels.updateChannel}). */
type Update = (current: ChannelRecord | undefined) => ChannelRecord | undefined;

/** The decision on a copy: one that throws leaves the copy as it is (no write), so a fresh read decides again. */
const onCopy =
  (update: Update): Update =>
  (current) => {
    try {
      return update(current);
    } catch {
      return current;
    }
  };
