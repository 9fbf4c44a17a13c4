import { existsSync } from 'node:fs';
import { z } from 'zod';
import type { Config } from './config.js';
import { createLogger } from './log.js';
import { BASE_MAINNET, type NetworkEntry } from './payments/networks.js';
import { formatReceiptsReport } from './receipts-format.js';
import { openStore, storeLocation } from './store/open.js';
import type { Store } from './store/store.js';

/** The three states a payment can be listed in. */
export type PaymentStatus = 'settled' | 'pending' | 'failed';

/** One payment as the operator sees it: a receipt (settled or failed) or a pending settlement. */
export interface PaymentRow {
  status: PaymentStatus;
  time: string;
  tool: string;
  network: string;
  /** Atomic units of the network's asset. */
  amount: string;
  /** The amount in the asset's decimal units (null when the network is not in the table). */
  units: string | null;
  payer: string;
  transport: string;
  transaction: string;
  errorReason?: string;
}

/** Count and sums of one status within a group. */
export interface StatusSum {
  count: number;
  /** Atomic units. */
  amount: string;
  units: string | null;
}

/** Totals of one network (and, in `byTool`, one tool) per status; amounts are never added across networks. */
export interface Total {
  tool?: string;
  network: string;
  label: string | null;
  asset: string | null;
  assetName: string | null;
  decimals: number | null;
  settled: StatusSum;
  pending: StatusSum;
  failed: StatusSum;
}

/** What `tollbooth receipts` reports. */
export interface ReceiptsReport {
  store: { kind: 'postgres' | 'sqlite'; where: string };
  filter: { status: PaymentStatus | null; limit: number };
  /** Payments matching the filter: `shown` most recent of `total`. */
  count: { shown: number; total: number };
  payments: PaymentRow[];
  /** Over every payment matching the filter, not only the ones shown. */
  totals: { byNetwork: Total[]; byTool: Total[] };
}

const OptionsSchema = z.object({
  limit: z.coerce.number().int('--limit must be a whole number').min(1, '--limit must be at least 1').max(1_000_000).default(50),
  status: z.enum(['settled', 'pending', 'failed'], { error: '--status must be settled, pending or failed' }).optional(),
  json: z.boolean().default(false),
});
/** Parsed options of `tollbooth receipts`. */
export type ReceiptsOptions = z.output<typeof OptionsSchema>;

/** Checks the values of `--limit N`, `--status settled|pending|failed` and `--json`; throws with a usage message when wrong. */
export function receiptsOptions(values: Record<string, unknown>): ReceiptsOptions {
  const parsed = OptionsSchema.safeParse(values);
  if (!parsed.success) throw new Error(parsed.error.issues.map((i) => i.message).join('; '));
  return parsed.data;
}

/** Version-1 network names the store may hold, mapped to the table's CAIP-2 ids (totals count them under the id). */
const V1_NAMES: Record<string, string> = { base: BASE_MAINNET };
/** Every receipt, however many: listReceipts takes a limit. */
const ALL = 2 ** 31 - 1;

/** Formats atomic units with `decimals` places, trailing zeros dropped ("3000", 6 → "0.003"). */
export function toUnits(atomic: bigint, decimals: number): string {
  const negative = atomic < 0n;
  const digits = (negative ? -atomic : atomic).toString().padStart(decimals + 1, '0');
  const whole = digits.slice(0, digits.length - decimals);
  const fraction = digits.slice(digits.length - decimals).replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}

const atomicOf = (amount: string): bigint => (/^\d+$/.test(amount) ? BigInt(amount) : 0n);

function lookup(networks: readonly NetworkEntry[], id: string): NetworkEntry | undefined {
  return networks.find((n) => n.id === (V1_NAMES[id] ?? id));
}

function units(networks: readonly NetworkEntry[], network: string, atomic: bigint): string | null {
  const entry = lookup(networks, network);
  return entry ? toUnits(atomic, entry.decimals) : null;
}

/** Reads receipts and pending settlements from `store` and builds the rows and totals for `options`. */
export async function buildReceiptsReport(
  store: Store,
  networks: readonly NetworkEntry[],
  options: ReceiptsOptions,
  location: ReceiptsReport['store'],
): Promise<ReceiptsReport> {
  const [receipts, pending] = await Promise.all([store.listReceipts({ limit: ALL }), store.listPending()]);
  const rows: PaymentRow[] = [
    ...receipts.map((r) => ({
      status: r.status, time: r.createdAt, tool: r.tool, network: r.network, amount: r.amount, payer: r.payer,
      transport: r.transport, transaction: r.transaction, ...(r.errorReason ? { errorReason: r.errorReason } : {}),
    })),
    ...pending.map((p) => ({
      status: 'pending' as const, time: p.updatedAt, tool: p.tool, network: p.network, amount: p.amount, payer: p.payer,
      transport: p.transport, transaction: p.transaction,
    })),
  ]
    .filter((row) => !options.status || row.status === options.status)
    .map((row) => ({ ...row, units: units(networks, row.network, atomicOf(row.amount)) }))
    .sort((a, b) => (a.time < b.time ? 1 : a.time > b.time ? -1 : 0));
  return {
    store: location,
    filter: { status: options.status ?? null, limit: options.limit },
    count: { shown: Math.min(options.limit, rows.length), total: rows.length },
    payments: rows.slice(0, options.limit),
    totals: {
      byNetwork: totals(rows, networks, false),
      byTool: totals(rows, networks, true),
    },
  };
}

function totals(rows: readonly PaymentRow[], networks: readonly NetworkEntry[], byTool: boolean): Total[] {
  const groups = new Map<string, { sample: PaymentRow; sums: Record<PaymentStatus, { count: number; atomic: bigint }> }>();
  for (const row of rows) {
    const network = V1_NAMES[row.network] ?? row.network;
    const key = byTool ? `${row.tool}\u0000${network}` : network;
    const group = groups.get(key) ?? {
      sample: { ...row, network },
      sums: { settled: { count: 0, atomic: 0n }, pending: { count: 0, atomic: 0n }, failed: { count: 0, atomic: 0n } },
    };
    group.sums[row.status].count += 1;
    group.sums[row.status].atomic += atomicOf(row.amount);
    groups.set(key, group);
  }
  return [...groups.values()]
    .map(({ sample, sums }) => {
      const entry = lookup(networks, sample.network);
      const sum = (s: PaymentStatus): StatusSum => ({ count: sums[s].count, amount: sums[s].atomic.toString(), units: units(networks, sample.network, sums[s].atomic) });
      return {
        ...(byTool ? { tool: sample.tool } : {}),
        network: sample.network,
        label: entry?.label ?? null,
        asset: entry?.asset ?? null,
        assetName: entry?.name ?? null,
        decimals: entry?.decimals ?? null,
        settled: sum('settled'),
        pending: sum('pending'),
        failed: sum('failed'),
      };
    })
    .sort((a, b) => `${a.tool ?? ''} ${a.network}`.localeCompare(`${b.tool ?? ''} ${b.network}`));
}

/** `tollbooth receipts`: prints settled, pending and failed payments with totals; returns the exit code. */
export async function runReceipts(
  config: Config,
  values: Record<string, unknown>,
  io: { out: (text: string) => void; err: (text: string) => void } = {
    out: (t) => process.stdout.write(t),
    err: (t) => process.stderr.write(t),
  },
): Promise<number> {
  let options: ReceiptsOptions;
  try {
    options = receiptsOptions(values);
  } catch (err) {
    io.err(`${(err as Error).message}\nUsage: tollbooth receipts [--limit N] [--status settled|pending|failed] [--json]\n`);
    return 2;
  }
  const location = storeLocation(config);
  if (location.kind === 'sqlite' && !existsSync(location.where)) {
    io.err(`No store at ${location.where}: nothing was recorded there. Point DATA_DIR (or DATABASE_URL) at the server's store.\n`);
    return 1;
  }
  let store: Store;
  try {
    store = await openStore(config, createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel));
  } catch (err) {
    io.err(`${(err as Error).message}\n`);
    return 1;
  }
  try {
    const report = await buildReceiptsReport(store, config.networks, options, location);
    io.out(options.json ? `${JSON.stringify(report, null, 2)}\n` : formatReceiptsReport(report));
    return 0;
  } finally {
    await store.close();
  }
}
