/**
 * The agent's own MCP tools in remote mode, free and local: `wallet-status` (addresses, balances where an RPC is
 * configured, today's spend and what is left) and `spending-history` (recent payments with their receipts).
 */
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { NetworkEntry } from '../shared/networks.js';
import { inputError } from '../shared/input-error.js';
import { portableSchema } from '../shared/mcp-wire.js';
import type { SpendLedger } from '../shared/spends.js';
import { readBalances } from './balances.js';
import type { Budget } from './budget.js';
import { usd } from './choose.js';
import { WALLET_HINT } from './explain.js';
import { NOT_SEEN_WARNING } from './receipt-check.js';
import type { AgentSettings } from './settings.js';
import { PAYABLE_FAMILIES, type Wallets } from './wallets.js';

const Family = z.enum(['evm', 'svm', 'stellar', 'algorand']);

const BudgetSchema = z.object({
  day: z.string().describe('The UTC day the daily budget counts (YYYY-MM-DD).'),
  spentToday: z.string().describe('Paid, being paid or of unknown outcome today, in US dollars.'),
  remainingToday: z.string(),
  maxPerCall: z.string(),
  maxPerDay: z.string(),
  askAbove: z.string().optional().describe('Payments above this amount are paid only after the user approves them.'),
  networks: z
    .array(z.string())
    .optional()
    .describe('Networks the agent may pay on (unset: every network it holds a wallet for).'),
  tools: z.array(z.string()).optional().describe('Tools the agent may pay for (unset: all).'),
});

const WalletStatusOutput = z.object({
  wallets: z.array(
    z.object({
      family: Family,
      address: z.string(),
      canPay: z.boolean().describe('false: this client holds the key but cannot pay on that family yet.'),
    }),
  ),
  balances: z.array(
    z.object({
      network: z.string(),
      label: z.string().optional(),
      asset: z.string(),
      ok: z.boolean(),
      amount: z.string().optional().describe("In the asset's smallest units."),
      decimals: z.number().optional(),
      usd: z.string().optional(),
      error: z.string().optional(),
    }),
  ),
  budget: BudgetSchema,
  remote: z.record(z.string(), z.string()).describe('Base URL of the remote deployment per tool group.'),
  note: z.string().optional(),
});

const HistoryInput = z.object({
  limit: z.number().int().min(1).max(200).default(20).describe('How many recent payments to list (1–200, default 20).'),
});

const HistoryOutput = z.object({
  payments: z.array(
    z.object({
      at: z.string(),
      tool: z.string(),
      resource: z.string(),
      origin: z.string().optional().describe("The seller's origin (scheme://host[:port]) the payment went to."),
      payTo: z.string().optional().describe('The address paid.'),
      protocol: z.enum(['x402', 'mpp']).describe('The payment protocol it was paid with.'),
      network: z.string(),
      asset: z.string(),
      amount: z.string(),
      usd: z.string(),
      status: z
        .enum(['reserved', 'settled', 'pending', 'failed'])
        .describe(
          'reserved: being paid; pending: outcome unknown (retried with the same payment); failed: not charged.',
        ),
      transaction: z.string().optional(),
      payer: z.string().optional(),
      paymentId: z.string().optional(),
      note: z.string().optional(),
      chainCheck: z.enum(['confirmed', 'not_seen']).optional(),
      warning: z.string().optional(),
    }),
  ),
  budget: BudgetSchema,
});

const schema = (type: z.ZodType, io: 'input' | 'output') =>
  portableSchema(z.toJSONSchema(type, { io, unrepresentable: 'any' }) as Record<string, unknown>);

/** The tools/list entries of the agent's own tools. */
export const AGENT_TOOLS: readonly Tool[] = [
  {
    name: 'wallet-status',
    title: "The agent's wallets and budget",
    description:
      "Free and local (nothing is sent to the remote deployment): the agent's wallet addresses, their stablecoin balances on the networks that have an RPC URL, today's spending (UTC day) and what is left of the budget, with the per-call and daily limits and the approval threshold.",
    inputSchema: schema(z.object({}), 'input') as Tool['inputSchema'],
    outputSchema: schema(WalletStatusOutput, 'output') as Tool['outputSchema'],
    annotations: {
      title: "The agent's wallets and budget",
      readOnlyHint: true,
      idempotentHint: true,
      openWorldHint: true,
    },
  },
  {
    name: 'spending-history',
    title: "The agent's recent payments",
    description:
      "Free and local: the most recent payments this agent made for remote tools, newest first, with tool, network, amount in US dollars, status and the receipt (transaction, payer, payment id), whether the chain confirmed it (chainCheck, with a warning when it did not), and today's budget.",
    inputSchema: schema(HistoryInput, 'input') as Tool['inputSchema'],
    outputSchema: schema(HistoryOutput, 'output') as Tool['outputSchema'],
    annotations: {
      title: "The agent's recent payments",
      readOnlyHint: true,
      idempotentHint: true,
      openWorldHint: false,
    },
  },
];

/** What the agent tools read. */
export interface AgentToolDeps {
  settings: AgentSettings;
  networks: readonly NetworkEntry[];
  spends: SpendLedger;
  wallets: Wallets;
  budget: Budget;
}

async function budgetView(budget: Budget): Promise<z.infer<typeof BudgetSchema>> {
  const s = await budget.status();
  return {
    day: s.day,
    spentToday: usd(s.spentMicros),
    remainingToday: usd(s.remainingMicros),
    maxPerCall: usd(s.maxMicrosPerCall),
    maxPerDay: usd(s.maxMicrosPerDay),
    ...(s.askAboveMicros !== undefined ? { askAbove: usd(s.askAboveMicros) } : {}),
    ...(budget.settings.networks ? { networks: budget.settings.networks } : {}),
    ...(budget.settings.tools ? { tools: budget.settings.tools } : {}),
  };
}

function structured(output: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(output) }], structuredContent: output };
}

/** Runs one of the agent's tools by name. */
export async function callAgentTool(deps: AgentToolDeps, name: string, args: unknown): Promise<CallToolResult> {
  if (name === 'wallet-status') {
    const families = Object.entries(deps.wallets.addresses) as Array<[z.infer<typeof Family>, string]>;
    const output: z.infer<typeof WalletStatusOutput> = {
      wallets: families.map(([family, address]) => ({ family, address, canPay: PAYABLE_FAMILIES.includes(family) })),
      balances: await readBalances(deps.networks, deps.wallets.addresses, deps.budget.settings.networks),
      budget: await budgetView(deps.budget),
      remote: { ...deps.settings.remote },
      ...(families.length === 0 ? { note: WALLET_HINT } : {}),
    };
    return structured(output);
  }
  const parsed = HistoryInput.safeParse(args ?? {});
  if (!parsed.success)
    return { isError: true, content: [{ type: 'text', text: JSON.stringify(inputError(parsed.error).toBody()) }] };
  const spends = await deps.spends.listSpends({
    limit: parsed.data.limit,
    statuses: ['reserved', 'settled', 'pending', 'failed'],
  });
  const output: z.infer<typeof HistoryOutput> = {
    payments: spends.map((s) => ({
      at: s.createdAt,
      tool: s.tool,
      resource: s.resource,
      ...(s.origin ? { origin: s.origin } : {}),
      ...(s.payTo ? { payTo: s.payTo } : {}),
      protocol: s.protocol ?? 'x402',
      network: s.network,
      asset: s.asset,
      amount: s.amount,
      usd: usd(s.usdMicros),
      status: s.status as 'reserved' | 'settled' | 'pending' | 'failed',
      ...(s.transaction ? { transaction: s.transaction } : {}),
      ...(s.payer ? { payer: s.payer } : {}),
      ...(s.paymentId ? { paymentId: s.paymentId } : {}),
      ...(s.note ? { note: s.note } : {}),
      ...(s.chainCheck ? { chainCheck: s.chainCheck } : {}),
      ...(s.chainCheck === 'not_seen' ? { warning: NOT_SEEN_WARNING } : {}),
    })),
    budget: await budgetView(deps.budget),
  };
  return structured(output);
}
