import { rmSync } from 'node:fs';
import type { PaymentPayload } from '@x402/core/types';
import type algosdk from 'algosdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Agent } from '../../src/agent/agent.js';
import { paymentTxnOf } from '../../src/shared/algorand-txns.js';
import type { AnyToolDefinition } from '../../src/tool/tool.js';
import { annuity } from '../../tools/annuity.js';
import { agentOfAlgorandPayer } from '../support/agent-of-payer.js';
import { startAlgorandEnvironment, type AlgorandEnvironment } from '../support/chain/algorand.js';
import {
  annuityThrough,
  checkedSpends,
  startReplayingSeller,
  type ReplayingSeller,
} from '../support/replaying-seller.js';
import { decodeHeader, startTestServer, type TestServer } from '../support/server.js';

// After a paid call on Algorand whose seller reported settled, the agent asks the network table's algod (here the
// local look-alike) whether its own signed asset transfer was committed.

let algo: AlgorandEnvironment;
let server: TestServer;
let liar: ReplayingSeller;
const dirs: string[] = [];
const agents: Agent[] = [];

beforeAll(async () => {
  algo = await startAlgorandEnvironment(1);
  server = await startTestServer(algo.env, { tools: [annuity] as AnyToolDefinition[] });
  liar = await startReplayingSeller(server.url, expire);
}, 120_000);
afterAll(async () => {
  await Promise.all(agents.map((a) => a.close()));
  await liar?.close();
  await server?.close();
  await algo?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});
/** The transfer of the payment the lying seller kept to itself (the last one it lied about). */
let withheld: algosdk.Transaction | undefined;

/** Moves algod's rounds past the withheld payment's last valid round (so algod can tell it can never be committed). */
function expire(header: string): void {
  withheld = paymentTxnOf(decodeHeader(header) as PaymentPayload)!;
  algo.ledger.advance(Number(withheld.lastValid - algo.ledger.round) + 1);
}

/** The agent of the Algorand payer, in process, with the environment's network table (its algod URL) and its own store. */
const algorandAgent = () =>
  agentOfAlgorandPayer(algo, 0, { REMOTE_URL: liar.url, AGENT_RECEIPT_CHECK_SECONDS: '0.35' }, { agents, dirs });

describe('receipts of paid calls on Algorand are checked on algod', () => {
  it('a call Tollbooth settled on Algorand: the spend is marked confirmed', async () => {
    const agent = await algorandAgent();
    const committed = algo.ledger.accepted.length;
    const outcome = await annuityThrough(agent, liar, false);
    expect(outcome).toMatchObject({ type: 'success', receipt: { success: true, network: algo.network } });
    expect(algo.ledger.accepted).toHaveLength(committed + 1);
    const spends = await checkedSpends(agent);
    expect(spends).toEqual([
      expect.objectContaining({ status: 'settled', network: algo.network, chainCheck: 'confirmed' }),
    ]);
  });

  it('a seller that answers settled without submitting the payment: once its last valid round has passed, the spend is not_seen', async () => {
    const agent = await algorandAgent();
    const payer = algo.payers[0]!.addr.toString();
    const before = { payer: algo.balance(payer), committed: algo.ledger.accepted.length };
    const outcome = await annuityThrough(agent, liar, true);
    expect(outcome).toMatchObject({ type: 'success', receipt: { success: true } });
    expect(algo.ledger.accepted).toHaveLength(before.committed);
    expect(algo.ledger.confirmed.has(withheld!.txID())).toBe(false);
    expect(algo.ledger.round).toBeGreaterThan(withheld!.lastValid);
    expect(algo.balance(payer)).toBe(before.payer);
    const spends = await checkedSpends(agent);
    expect(spends).toEqual([
      expect.objectContaining({ status: 'settled', network: algo.network, chainCheck: 'not_seen' }),
    ]);
  });
});
