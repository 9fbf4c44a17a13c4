import { existsSync } from 'node:fs';
import type { Config } from '../config/config.js';
import { createLogger } from '../shared/log.js';
import { BASE_MAINNET, BASE_SEPOLIA, type NetworkEntry } from '../shared/networks.js';
import { formatReceiptsReport } from './format.js';
import type { PaymentRow, PaymentStatus, ReceiptsReport, StatusSum, Total } from './types.js';
import { openStore, storeLocation } from '../store/open.js';
import { entryKey, entryTime, readJournals, type OutboxEntry } from '../payments/ledger/settled-journal.js';
import { paymentRows, type ReceiptsLedger } from './rows.js';
import type { Store } from '../store/store.js';

export type { PaymentRow, PaymentStatus, ReceiptsReport, StatusSum, Total } from './types.js';

/** The options of `tollbooth receipts`, checked by the command (`src/cli/receipts.ts`). */
export interface ReceiptsOptions {
  limit: number;
  status?: PaymentStatus | undefined;
  protocol?: 'x402' | 'mpp' | undefined;
  json: boolean;
}

/** Version-1 network names the store may hold, mapped to the table's CAIP-2 ids (totals count them under the id). */
const V1_NAMES: Record<string, string> = { base: BASE_MAINNET, 'base-sepolia': BASE_SEPOLIA };
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

/**
 * Reads receipts, pending settlements and claims in doubt from the ledger (with the outcomes the local journal holds)
 * and builds the rows and totals for `options`.
 */
export async function buildReceiptsReport(
  ledger: ReceiptsLedger,
  networks: readonly NetworkEntry[],
  options: ReceiptsOptions,
  location: ReceiptsReport['store'],
  journal: readonly OutboxEntry[] = [],
): Promise<ReceiptsReport> {
  const rows: PaymentRow[] = (await paymentRows(ledger, journal, ALL))
    .filter(
      (row) =>
        (!options.status || row.status === options.status) && (!options.protocol || row.protocol === options.protocol),
    )
    .map((row) => ({ ...row, units: units(networks, row.network, atomicOf(row.amount)) }))
    .sort((a, b) => (a.time < b.time ? 1 : a.time > b.time ? -1 : 0));
  return {
    store: location,
    filter: { status: options.status ?? null, protocol: options.protocol ?? null, limit: options.limit },
    count: { shown: Math.min(options.limit, rows.length), total: rows.length },
    payments: rows.slice(0, options.limit),
    totals: {
      byNetwork: totals(rows.filter(isCharge), networks, 'network'),
      byTool: totals(rows.filter(isCharge), networks, 'tool'),
      byProtocol: totals(rows.filter(isCharge), networks, 'protocol'),
    },
  };
}

/** A charge to a payer: claims, settles and refunds of batch channels move value already charged, so totals skip them. */
const isCharge = (row: PaymentRow): boolean => row.kind !== 'claim' && row.kind !== 'settle' && row.kind !== 'refund';

/** What the rows are grouped by besides the network. */
type GroupBy = 'network' | 'tool' | 'protocol';

function totals(rows: readonly PaymentRow[], networks: readonly NetworkEntry[], by: GroupBy): Total[] {
  const groups = new Map<
    string,
    { sample: PaymentRow; sums: Record<PaymentStatus, { count: number; atomic: bigint }> }
  >();
  for (const row of rows) {
    const network = V1_NAMES[row.network] ?? row.network;
    const key = by === 'network' ? network : `${by === 'tool' ? row.tool : row.protocol}\u0000${network}`;
    const group = groups.get(key) ?? {
      sample: { ...row, network },
      sums: {
        settled: { count: 0, atomic: 0n },
        pending: { count: 0, atomic: 0n },
        in_doubt: { count: 0, atomic: 0n },
        failed: { count: 0, atomic: 0n },
      },
    };
    group.sums[row.status].count += 1;
    group.sums[row.status].atomic += atomicOf(row.amount);
    groups.set(key, group);
  }
  return [...groups.values()]
    .map(({ sample, sums }) => {
      const entry = lookup(networks, sample.network);
      const sum = (s: PaymentStatus): StatusSum => ({
        count: sums[s].count,
        amount: sums[s].atomic.toString(),
        units: units(networks, sample.network, sums[s].atomic),
      });
      return {
        ...(by === 'tool' ? { tool: sample.tool } : {}),
        ...(by === 'protocol' ? { protocol: sample.protocol } : {}),
        network: sample.network,
        label: entry?.label ?? null,
        asset: entry?.asset ?? null,
        assetName: entry?.name ?? null,
        decimals: entry?.decimals ?? null,
        settled: sum('settled'),
        pending: sum('pending'),
        failed: sum('failed'),
        inDoubt: sum('in_doubt'),
      };
    })
    .sort((a, b) =>
      `${a.tool ?? a.protocol ?? ''} ${a.network}`.localeCompare(`${b.tool ?? b.protocol ?? ''} ${b.network}`),
    );
}

/** `tollbooth receipts`: prints settled, pending, in-doubt and failed payments with totals (by network, tool and protocol); returns the exit code. */
export async function runReceipts(
  config: Config,
  options: ReceiptsOptions,
  io: { out: (text: string) => void; err: (text: string) => void } = {
    out: (t) => process.stdout.write(t),
    err: (t) => process.stderr.write(t),
  },
): Promise<number> {
  const location = storeLocation(config);
  if (location.kind === 'sqlite' && !existsSync(location.where)) {
    io.err(
      `No store at ${location.where}: nothing was recorded there. Point DATA_DIR (or DATABASE_URL) at the server's store.\n`,
    );
    return 1;
  }
  let store: Store;
  try {
    store = await openStore(config, createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel));
  } catch (err) {
    io.err(`${(err as Error).message}\n`);
    const waiting = await readJournals(config.dataDir).catch(() => []);
    // The store is out of reach: what the journal holds is still known, with the transactions the facilitator named.
    for (const entry of waiting) {
      const transaction = entry.type === 'settled' ? entry.receipt.transaction : entry.details.transaction;
      io.err(`in_doubt ${entry.type} ${entryTime(entry)} ${entryKey(entry)} ${transaction || '-'} (journal)\n`);
    }
    return 1;
  }
  try {
    const journal = await readJournals(config.dataDir);
    const report = await buildReceiptsReport(store.ledger, config.networks, options, location, journal);
    io.out(options.json ? `${JSON.stringify(report, null, 2)}\n` : formatReceiptsReport(report));
    return 0;
  } finally {
    await store.close();
  }
}
