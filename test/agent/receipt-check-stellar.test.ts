import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Agent } from '../../src/agent/agent.js';
import type { AnyToolDefinition } from '../../src/tool/tool.js';
import { annuity } from '../../tools/annuity.js';
import { agentOfStellarPayer } from '../support/agent-of-payer.js';
import { startStellarEnvironment, type StellarEnvironment } from '../support/chain/stellar.js';
import {
  annuityThrough,
  checkedSpends,
  startReplayingSeller,
  type ReplayingSeller,
} from '../support/replaying-seller.js';
import { startTestServer, type TestServer } from '../support/server.js';

// After a paid call on Stellar whose seller reported settled, the agent asks the network table's Soroban RPC
// (here the local look-alike ledger) whether its own signed transfer is on the ledger.

let stellar: StellarEnvironment;
let server: TestServer;
let liar: ReplayingSeller;
const dirs: string[] = [];
const agents: Agent[] = [];

beforeAll(async () => {
  stellar = await startStellarEnvironment({ payers: 1 });
  server = await startTestServer(stellar.env, { tools: [annuity] as AnyToolDefinition[] });
  liar = await startReplayingSeller(server.url, () => stellar.rpc.ledger.advance(1000));
}, 120_000);
afterAll(async () => {
  await Promise.all(agents.map((a) => a.close()));
  await liar?.close();
  await server?.close();
  await stellar?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** The agent of the Stellar payer, in process, with the environment's network table (its RPC URL) and its own store. */
const stellarAgent = () =>
  agentOfStellarPayer(stellar, 0, { REMOTE_URL: liar.url, AGENT_RECEIPT_CHECK_SECONDS: '0.35' }, { agents, dirs });

describe('receipts of paid calls on Stellar are checked on the ledger', () => {
  it('a call Tollbooth settled on Stellar: the spend is marked confirmed', async () => {
    const agent = await stellarAgent();
    const outcome = await annuityThrough(agent, liar, false);
    expect(outcome).toMatchObject({ type: 'success', receipt: { success: true, network: stellar.network } });
    const spends = await checkedSpends(agent);
    expect(spends).toEqual([
      expect.objectContaining({ status: 'settled', network: stellar.network, chainCheck: 'confirmed' }),
    ]);
  });

  it('a seller that answers settled without submitting the payment: once its validity has passed, the spend is not_seen', async () => {
    const agent = await stellarAgent();
    const payer = stellar.payers[0]!.publicKey();
    const before = { payer: stellar.balance(payer), included: stellar.rpc.included.length };
    const outcome = await annuityThrough(agent, liar, true);
    expect(outcome).toMatchObject({ type: 'success', receipt: { success: true } });
    expect(stellar.rpc.included).toHaveLength(before.included);
    expect(stellar.balance(payer)).toBe(before.payer);
    const spends = await checkedSpends(agent);
    expect(spends).toEqual([
      expect.objectContaining({ status: 'settled', network: stellar.network, chainCheck: 'not_seen' }),
    ]);
  });
});
