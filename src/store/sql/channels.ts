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

/** The columns written for a record: the record itself and the fields listings and metrics read without parsing it. */
function columns(next: ChannelRecord, revision: string): unknown[] {
  return [
    revision,
    next.channelConfig.payer.toLowerCase(),
    next.channelConfig.receiver.toLowerCase(),
    next.channelConfig.token.toLowerCase(),
    next.balance,
    next.chargedCumulativeAmount,
    next.totalClaimed,
    next.lastRequestTimestamp,
    next.pendingRequest?.expiresAt ?? null,
    JSON.stringify(next),
    new Date().toISOString(),
  ];
}

/** The one conditional write that turns the state read (`revision`, or no row) into `next` (a record, or none). */
function conditionalWrite(key: string, revision: string | undefined, next: ChannelRecord | undefined): Statement {
  if (next === undefined) {
    return {
      sql: 'DELETE FROM batch_channels WHERE channel_id = ? AND revision = ? RETURNING channel_id',
      args: [key, revision],
    };
  }
  const values = columns(next, randomUUID());
  if (revision === undefined) {
    return {
      sql: `INSERT INTO batch_channels (channel_id, revision, payer, receiver, token, balance, charged, claimed,
              last_request_at, pending_until, record, updated_at)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (channel_id) DO NOTHING RETURNING channel_id`,
      args: [key, ...values],
    };
  }
  return {
    sql: `UPDATE batch_channels SET revision = ?, payer = ?, receiver = ?, token = ?, balance = ?, charged = ?, claimed = ?,
            last_request_at = ?, pending_until = ?, record = ?, updated_at = ?
          WHERE channel_id = ? AND revision = ? RETURNING channel_id`,
    args: [...values, key, revision],
  };
}

/** The batch-settlement channels of one database (see {@link BatchChannels}). */
export function sqlBatchChannels(port: SqlPort): BatchChannels {
  const read = async (key: string) => {
    const [row] = await port.read('SELECT revision, record FROM batch_channels WHERE channel_id = ?', [key]);
    return row ? { revision: String(row.revision), channel: fromRow(row) } : undefined;
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
      for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
        const stored = await read(key);
        const current = stored?.channel;
        const next = update(current);
        if (next === current) return { channel: current, status: 'unchanged' };
        if (next === undefined && stored === undefined) return { channel: undefined, status: 'unchanged' };
        const written = await port.write(...sqlOf(conditionalWrite(key, stored?.revision, next)));
        if (written.rows.length === 1) {
          // The answer that follows may promise the charge: it must outlive a crash first.
          await port.durable();
          return next === undefined ? { channel: undefined, status: 'deleted' } : { channel: next, status: 'updated' };
        }
        // Another writer got there first: back off a little (more as the race goes on) and decide again on its state.
        await sleep(Math.random() * Math.min(attempt, 20));
      }
      throw new Error(`channel ${key} is too contended to update; retry the request`);
    },
  };
}

const sqlOf = (s: Statement): [string, readonly unknown[]] => [s.sql, s.args];
