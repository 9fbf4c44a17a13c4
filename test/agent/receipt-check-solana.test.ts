import { rmSync } from 'node:fs';
import { createKeyPairSignerFromBytes, type Address } from '@solana/kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Agent } from '../../src/agent/agent.js';
import type { AnyToolDefinition } from '../../src/tool/tool.js';
import { annuity } from '../../tools/annuity.js';
import { agentOfSolanaPayer } from '../support/agent-of-payer.js';
import { newSolanaKeypairBytes, startSolanaEnvironment, type SolanaEnvironment } from '../support/chain/solana-env.js';
import {
  annuityThrough,
  checkedSpends,
  startReplayingSeller,
  type ReplayingSeller,
} from '../support/replaying-seller.js';
import { startTestServer, type TestServer } from '../support/server.js';

// After a paid call on Solana whose seller reported settled, the agent asks the network table's Solana RPC (here the
// litesvm look-alike) whether its own signed transfer landed, searching the payer's recent transactions.

let sol: SolanaEnvironment;
let server: TestServer;
let liar: ReplayingSeller;
let payerSecret: Uint8Array;
let payer: Address;
const dirs: string[] = [];
const agents: Agent[] = [];

beforeAll(async () => {
  sol = await startSolanaEnvironment(0);
  payerSecret = newSolanaKeypairBytes();
  payer = (await createKeyPairSignerFromBytes(payerSecret)).address;
  await sol.ledger.fund(payer, sol.mint, 10_000_000n);
  server = await startTestServer(sol.env, { tools: [annuity] as AnyToolDefinition[] });
  liar = await startReplayingSeller(server.url, () => sol.ledger.svm.expireBlockhash());
}, 120_000);
afterAll(async () => {
  await Promise.all(agents.map((a) => a.close()));
  await liar?.close();
  await server?.close();
  await sol?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** The agent of the Solana payer, in process, with the environment's network table (its RPC URL) and its own store. */
const solanaAgent = () =>
  agentOfSolanaPayer(sol, payerSecret, { REMOTE_URL: liar.url, AGENT_RECEIPT_CHECK_SECONDS: '0.35' }, { agents, dirs });

describe('receipts of paid calls on Solana are checked on the chain', () => {
  it('a call Tollbooth settled on Solana: the spend is marked confirmed', async () => {
    const agent = await solanaAgent();
    const outcome = await annuityThrough(agent, liar, false);
    expect(outcome).toMatchObject({
      type: 'success',
      receipt: { success: true, network: sol.network.id, transaction: sol.rpc.landed.at(-1) },
    });
    const spends = await checkedSpends(agent);
    expect(spends).toEqual([
      expect.objectContaining({ status: 'settled', network: sol.network.id, chainCheck: 'confirmed' }),
    ]);
  });

  it('a seller that answers settled without submitting the payment: once its blockhash has expired, the spend is not_seen', async () => {
    const agent = await solanaAgent();
    const before = {
      payer: await sol.balance(payer),
      payTo: await sol.balance(sol.payTo),
      landed: sol.rpc.landed.length,
    };
    const outcome = await annuityThrough(agent, liar, true);
    expect(outcome).toMatchObject({ type: 'success', receipt: { success: true } });
    expect(sol.rpc.landed).toHaveLength(before.landed);
    expect(await sol.balance(payer)).toBe(before.payer);
    expect(await sol.balance(sol.payTo)).toBe(before.payTo);
    const spends = await checkedSpends(agent);
    expect(spends).toEqual([
      expect.objectContaining({ status: 'settled', network: sol.network.id, chainCheck: 'not_seen' }),
    ]);
    expect(sol.rpc.unknownMethods).toEqual([]);
  });
});
