/** The agent's batch-settlement channels and their deposits over the SQL port, one SQL text for both dialects. */
import type {
  AgentChannel,
  ChannelConfigNote,
  AgentChannelBook,
  ChannelContext,
  NewDeposit,
  NewVoucher,
  VoucherDraw,
  VoucherOutcome,
} from '../../shared/agent-channels.js';
import type { SqlPort, Statement } from './port.js';
import { fromJson, json, time } from './rows.js';

/** Statuses whose amount counts against the day's budget (as in ./spends.ts). */
const COUNTED = "status IN ('reserved', 'settled', 'pending')";
const NEXT_SEQ = '(SELECT COALESCE(MAX(seq), 0) + 1 FROM agent_spends)';

const now = () => new Date().toISOString();

/** A spend row of the channel's kind: a deposit or a voucher call (columns as in ./spends.ts). */
function insertSpend(kind: 'deposit' | 'voucher', s: NewDeposit, status: string): Statement {
  const at = now();
  return {
    sql: `INSERT INTO agent_spends (id, seq, day, tool, resource, request_hash, network, asset, amount, usd_micros, status,
            protocol, kind, channel_id, origin, pay_to, created_at, updated_at)
          SELECT ?, ${NEXT_SEQ}, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'x402', ?, ?, ?, ?, ?, ?`,
    args: [
      ...[s.id, s.day, s.tool, s.resource, s.requestHash, s.network, s.asset, s.amount, s.usdMicros, status],
      ...[kind, s.channelId, s.origin ?? null, s.payTo ?? null, at, at],
    ],
  };
}

async function claimDeposit(
  port: SqlPort,
  d: NewDeposit,
  dayLimitMicros: number,
  originDayLimitMicros?: number,
): Promise<boolean> {
  const insert = insertSpend('deposit', d, 'reserved');
  // The origin's day counts its deposits (still committed) and its vouchers' charges, as ./spends.ts claims a payment.
  const origin =
    originDayLimitMicros === undefined || d.origin === undefined
      ? { sql: '', args: [] }
      : {
          sql: `AND (SELECT COALESCE(SUM(usd_micros), 0) FROM agent_spends WHERE day = ? AND origin = ? AND ${COUNTED}) + ? <= ?`,
          args: [d.day, d.origin, d.usdMicros, originDayLimitMicros],
        };
  const result = await port.writeLocked('agent_spends', {
    sql: `${insert.sql}
          WHERE (SELECT COALESCE(SUM(usd_micros), 0) FROM agent_spends WHERE day = ? AND ${COUNTED}) + ? <= ?
          ${origin.sql}
          RETURNING id`,
    args: [...insert.args, d.day, d.usdMicros, dayLimitMicros, ...origin.args],
  });
  return result.rows.length === 1;
}

async function drawVoucher(port: SqlPort, v: NewVoucher): Promise<VoucherDraw> {
  const deposits = await port.read(
    `SELECT id, day, usd_micros FROM agent_spends
     WHERE channel_id = ? AND kind = 'deposit' AND status IN ('reserved', 'settled') AND usd_micros > 0 ORDER BY seq`,
    [v.channelId],
  );
  const from: VoucherDraw['from'] = [];
  let left = v.usdMicros;
  for (const row of deposits) {
    if (left <= 0) break;
    const take = Math.min(left, Number(row.usd_micros));
    from.push({ depositId: String(row.id), usdMicros: take });
    left -= take;
  }
  if (from.length === 0) throw new Error('no deposit of this channel is committed against the budget');
  // The call counts on the day of the deposit it draws from: that deposit already took it from that day's budget.
  const [day] = await port.read('SELECT day FROM agent_spends WHERE id = ?', [from[0]!.depositId]);
  const insert = insertSpend('voucher', { ...v, day: String(day?.day) }, 'reserved');
  await port.writeEach([
    ...from.map((f) => giveBack(f.depositId, -f.usdMicros)),
    { sql: `${insert.sql} RETURNING id`, args: insert.args },
  ]);
  return { id: v.id, usdMicros: v.usdMicros, from };
}

/** Adds `micros` (negative: takes) to a deposit's committed amount. */
function giveBack(depositId: string, micros: number): Statement {
  return {
    sql: 'UPDATE agent_spends SET usd_micros = usd_micros + ?, updated_at = ? WHERE id = ? RETURNING id',
    args: [micros, now(), depositId],
  };
}

async function endVoucher(port: SqlPort, draw: VoucherDraw, outcome: VoucherOutcome): Promise<void> {
  const at = now();
  if (outcome.type === 'pending') {
    await port.write(`UPDATE agent_spends SET status = 'pending', note = ?, updated_at = ? WHERE id = ?`, [
      outcome.note,
      at,
      draw.id,
    ]);
    return;
  }
  if (outcome.type === 'released') {
    await port.writeEach([
      ...draw.from.map((f) => giveBack(f.depositId, f.usdMicros)),
      {
        sql: `UPDATE agent_spends SET status = 'cancelled', note = ?, updated_at = ? WHERE id = ? RETURNING id`,
        args: [outcome.note, at, draw.id],
      },
    ]);
    return;
  }
  const back = Math.max(0, draw.usdMicros - outcome.chargedMicros);
  await port.writeEach([
    ...(back > 0 ? [giveBack(draw.from[0]!.depositId, back)] : []),
    {
      sql: `UPDATE agent_spends SET status = 'settled', usd_micros = ?, amount = ?, payer = COALESCE(?, payer),
              updated_at = ? WHERE id = ? RETURNING id`,
      args: [outcome.chargedMicros, outcome.amount, outcome.payer ?? null, at, draw.id],
    },
  ]);
}

async function released(port: SqlPort, channelId: string, refundedAtomic: string, note: string): Promise<void> {
  const [row] = await port.read('SELECT refunded FROM agent_channels WHERE channel_id = ?', [channelId]);
  const total = (BigInt(String(row?.refunded ?? '0')) + BigInt(refundedAtomic)).toString();
  await port.writeEach([
    {
      sql: `UPDATE agent_spends SET usd_micros = 0, note = ?, updated_at = ?
            WHERE channel_id = ? AND kind = 'deposit' AND usd_micros > 0 RETURNING id`,
      args: [note, now(), channelId],
    },
    {
      sql: 'UPDATE agent_channels SET refunded = ? WHERE channel_id = ? RETURNING channel_id',
      args: [total, channelId],
    },
  ]);
}

async function list(port: SqlPort): Promise<AgentChannel[]> {
  const rows = await port.read('SELECT * FROM agent_channels ORDER BY last_used_at DESC');
  const spends = await port.read(
    `SELECT channel_id, kind, status, amount, usd_micros FROM agent_spends WHERE channel_id IS NOT NULL AND ${COUNTED}`,
  );
  return rows.map((row) => {
    const mine = spends.filter((s) => s.channel_id === row.channel_id);
    const sum = (kind: string) => mine.filter((s) => s.kind === kind).reduce((t, s) => t + Number(s.usd_micros), 0);
    const deposited = mine
      .filter((s) => s.kind === 'deposit' && s.status === 'settled')
      .reduce((t, s) => t + BigInt(String(s.amount)), 0n);
    const context = fromJson(row.context) as ChannelContext | undefined;
    const optional = (name: string) => (row[name] === null || row[name] === undefined ? {} : { [name]: row[name] });
    return {
      channelId: String(row.channel_id),
      ...optional('network'),
      ...optional('asset'),
      ...(row.pay_to ? { payTo: String(row.pay_to) } : {}),
      ...optional('resource'),
      ...(row.decimals !== null && row.decimals !== undefined ? { decimals: Number(row.decimals) } : {}),
      ...(context ? { context } : {}),
      ...(row.channel_config ? { channelConfig: fromJson(row.channel_config) as ChannelConfigNote } : {}),
      deposited: deposited.toString(),
      refunded: String(row.refunded),
      committedMicros: sum('deposit'),
      spentMicros: sum('voucher'),
      createdAt: time(row.created_at),
      lastUsedAt: time(row.last_used_at),
    } as AgentChannel;
  });
}

/** The agent's channel book over a SQL port. */
export function sqlAgentChannels(port: SqlPort): AgentChannelBook {
  return {
    get: async (channelId) => {
      const [row] = await port.read('SELECT context FROM agent_channels WHERE channel_id = ?', [channelId]);
      return row ? (fromJson(row.context) as ChannelContext | undefined) : undefined;
    },
    set: async (channelId, context) => {
      const at = now();
      await port.write(
        `INSERT INTO agent_channels (channel_id, context, created_at, last_used_at, updated_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (channel_id) DO UPDATE SET context = excluded.context, updated_at = excluded.updated_at`,
        [channelId, json(context), at, at, at],
      );
    },
    delete: async (channelId) => {
      await port.write('UPDATE agent_channels SET context = NULL, updated_at = ? WHERE channel_id = ?', [
        now(),
        channelId,
      ]);
    },
    note: async (n) => {
      const at = now();
      await port.write(
        `INSERT INTO agent_channels (channel_id, network, asset, pay_to, resource, decimals, channel_config, created_at,
           last_used_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (channel_id) DO UPDATE SET network = excluded.network, asset = excluded.asset, pay_to = excluded.pay_to,
           resource = excluded.resource, decimals = excluded.decimals, last_used_at = excluded.last_used_at,
           channel_config = COALESCE(excluded.channel_config, agent_channels.channel_config)`,
        [n.channelId, n.network, n.asset, n.payTo, n.resource, n.decimals, json(n.channelConfig), at, at, at],
      );
    },
    claimDeposit: (deposit, limit, originLimit) => claimDeposit(port, deposit, limit, originLimit),
    endDeposit: async (id, outcome) => {
      await port.write(
        `UPDATE agent_spends SET status = ?, transaction_id = COALESCE(?, transaction_id), note = ?, updated_at = ?
         WHERE id = ? AND status IN ('reserved', 'pending')`,
        outcome.settled
          ? ['settled', outcome.transaction ?? null, null, now(), id]
          : ['cancelled', null, outcome.note, now(), id],
      );
    },
    drawVoucher: (voucher) => drawVoucher(port, voucher),
    endVoucher: (draw, outcome) => endVoucher(port, draw, outcome),
    released: (channelId, refunded, note) => released(port, channelId, refunded, note),
    list: () => list(port),
  };
}
