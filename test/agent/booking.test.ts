import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgent, type Agent } from '../../src/agent/agent.js';
import type { CallOptions } from '../../src/agent/call.js';
import { targetOf } from '../../src/agent/mcp.js';
import type { CallOutcome } from '../../src/agent/outcome.js';
import { loadAgentConfig } from '../../src/agent/settings.js';
import { silentLogger } from '../../src/shared/log.js';
import { DEV_PAY_TO, ZERO_ADDRESSES } from '../../src/shared/dev-addresses.js';
import { openStore } from '../../src/store/open.js';
import { annuity } from '../../tools/annuity.js';
import { startLookalikeFacilitator, type LookalikeFacilitator } from '../support/facilitator.js';
import { LOCAL_NETWORK, startPaidEnvironment, type PaidEnvironment } from '../support/paid.js';
import { decodeHeader, startTestServer, type TestServer } from '../support/server.js';

/**
 * How the agent books a payment a seller refused, while the chain's RPC cannot be reached (so nothing can be looked
 * up on chain): a refusal given before any settlement gives the budget its money back at once; an answer that leaves
 * the payment's fate open keeps it counted and pending. Sellers: real Tollbooth servers on a local chain, and a
 * look-alike seller on 127.0.0.1 that answers a paid request as a test tells it to.
 */

const input = { payment: 100, ratePerPeriod: 0.05, periods: 10 };
/** An address nothing listens on: the agent's chain RPC, unreachable. */
const DEAD_RPC = 'http://127.0.0.1:9';

type PaidAnswer = 'hang' | 'invalid_input' | 'internal';

/** A seller that answers the probe with a real Tollbooth challenge (pay-to replaced at will) and paid requests per `mode`. */
interface LookalikeSeller {
  url: string;
  payTo: string | undefined;
  mode: PaidAnswer;
  /** The PAYMENT-SIGNATURE headers of the paid requests it received. */
  signatures: string[];
  close(): Promise<void>;
}

let paid: PaidEnvironment;
let facilitator: LookalikeFacilitator;
let noFacilitator: TestServer;
let facilitatorDown: TestServer;
let seller: LookalikeSeller;
const dirs: string[] = [];
const agents: Agent[] = [];

async function startLookalikeSeller(challengeHeader: string): Promise<LookalikeSeller> {
  const hanging = new Set<ServerResponse>();
  const state: LookalikeSeller = {
    url: '',
    payTo: undefined,
    mode: 'invalid_input',
    signatures: [],
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    req.resume();
    const signature = req.headers['payment-signature'];
    if (typeof signature !== 'string') {
      const challenge = decodeHeader(challengeHeader) as { accepts: Array<{ payTo: string }> };
      if (state.payTo) for (const entry of challenge.accepts) entry.payTo = state.payTo;
      const header = Buffer.from(JSON.stringify(challenge)).toString('base64');
      res.writeHead(402, { 'payment-required': header, 'content-type': 'application/json' }).end('{}');
      return;
    }
    state.signatures.push(signature);
    if (state.mode === 'hang') return void hanging.add(res);
    const [status, code] = state.mode === 'invalid_input' ? [400, 'invalid_input'] : [500, 'internal'];
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { code, message: 'refused by the look-alike' } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return state;
}

beforeAll(async () => {
  paid = await startPaidEnvironment(1);
  facilitator = await startLookalikeFacilitator({
    rpcUrl: paid.chain.rpcUrl,
    chainId: 84532,
    privateKey: paid.env.FACILITATOR_EVM_PRIVATE_KEY as `0x${string}`,
    network: LOCAL_NETWORK,
  });
  facilitator.setMode({ verify: 'http500' });
  const { FACILITATOR_EVM_PRIVATE_KEY: _none, ...sellerEnv } = paid.env;
  noFacilitator = await startTestServer(sellerEnv);
  facilitatorDown = await startTestServer({
    ...sellerEnv,
    FACILITATOR_URL: facilitator.url,
    FACILITATOR_EVM_ADDRESS: facilitator.address,
  });
  const probe = await fetch(noFacilitator.url + '/api/annuity', { method: 'POST' });
  seller = await startLookalikeSeller(probe.headers.get('payment-required')!);
}, 120_000);
afterAll(async () => {
  await Promise.all(agents.map((a) => a.close().catch(() => undefined)));
  await seller?.close();
  await facilitatorDown?.close();
  await noFacilitator?.close();
  await facilitator?.close();
  await paid?.stop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/**
 * An agent paying `remote` from the funded payer, whose network table points the chain check at a dead RPC. Its
 * remote timeout is short only where a seller never answers (a loaded machine can take longer than that to verify).
 */
async function agentFor(remote: string, remoteTimeoutMs = 10_000): Promise<Agent> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tollbooth-agent-'));
  dirs.push(dataDir);
  const [network] = (JSON.parse(paid.env.NETWORKS_JSON!) as { networks: Array<Record<string, unknown>> }).networks;
  const key = paid.chain.accounts.find((a) => a.address === paid.payers[0]!.address)!.privateKey;
  const config = loadAgentConfig({
    DATA_DIR: dataDir,
    NETWORKS_JSON: JSON.stringify({ networks: [{ ...network, rpcUrl: DEAD_RPC }] }),
    WALLET_EVM_PRIVATE_KEY: key,
    BUDGET_NETWORKS: LOCAL_NETWORK,
    REMOTE_URL: remote,
    REMOTE_TIMEOUT_MS: String(remoteTimeoutMs),
    LOG_LEVEL: 'silent',
  });
  const agent = await createAgent(config, silentLogger, openStore);
  agents.push(agent);
  return agent;
}

const options = (over: Partial<CallOptions> = {}): CallOptions => ({
  signal: new AbortController().signal,
  approve: async () => 'accepted',
  ...over,
});
const call = (agent: Agent, over?: Partial<CallOptions>) => agent.caller.call(targetOf(annuity), input, options(over));
const errorOf = (outcome: CallOutcome) => {
  if (outcome.type !== 'refused') throw new Error(`expected a refusal, got ${outcome.type}`);
  return outcome.error;
};

describe('a refusal before settlement, with the chain out of reach', () => {
  it('releases a payment refused as unsupported_payment_rail at once: nothing counts against the budget', async () => {
    const agent = await agentFor(noFacilitator.url);
    const outcome = await call(agent);
    expect(errorOf(outcome)).toMatchObject({ code: 'payment_failed' });
    expect(errorOf(outcome).message).toMatch(/refused the payment \(unsupported_payment_rail\).*nothing was charged/);
    expect(errorOf(outcome).message).toMatch(/refused before settlement/);
    expect(outcome.type === 'refused' && outcome.payment).toMatchObject({ status: 'cancelled', spentToday: '$0.00' });
    expect((await agent.budget.status()).spentMicros).toBe(0);
    expect(await agent.spends.listSpends()).toEqual([
      expect.objectContaining({
        status: 'cancelled',
        note: expect.stringMatching(/unsupported_payment_rail.*before settlement/),
      }),
    ]);
  });

  it('releases a payment answered 502 facilitator_unavailable (raised while verifying, before anything was sent)', async () => {
    const agent = await agentFor(facilitatorDown.url);
    const verifies = facilitator.calls.verify;
    const outcome = await call(agent);
    expect(facilitator.calls.verify).toBeGreaterThan(verifies);
    expect(outcome).toMatchObject({ type: 'remote_error', status: 502 });
    expect((await agent.budget.status()).spentMicros).toBe(0);
    expect(await agent.spends.listSpends()).toEqual([
      expect.objectContaining({
        status: 'cancelled',
        note: expect.stringMatching(/502 facilitator_unavailable.*before settlement/),
      }),
    ]);
  });

  it('releases a payment answered 400 invalid_input', async () => {
    const agent = await agentFor(seller.url);
    seller.mode = 'invalid_input';
    const outcome = await call(agent);
    expect(outcome).toMatchObject({ type: 'remote_error', status: 400 });
    expect((await agent.budget.status()).spentMicros).toBe(0);
    expect(await agent.spends.listSpends({ statuses: ['pending', 'reserved', 'settled'] })).toEqual([]);
  });
});

describe('an answer that leaves the payment open, with the chain out of reach', () => {
  it('keeps a payment whose answer never came pending (the same payment re-sent each time) and counted', async () => {
    const agent = await agentFor(seller.url, 400);
    seller.mode = 'hang';
    const before = seller.signatures.length;
    const outcome = await call(agent);
    expect(errorOf(outcome)).toMatchObject({ code: 'payment_pending' });
    expect(outcome.type === 'refused' && outcome.payment).toMatchObject({ status: 'pending', spentToday: '$0.001' });
    const sent = seller.signatures.slice(before);
    expect(sent.length).toBeGreaterThan(1);
    expect(new Set(sent).size).toBe(1);
    expect((await agent.budget.status()).spentMicros).toBe(1000);
    expect(await agent.spends.listSpends()).toEqual([expect.objectContaining({ status: 'pending' })]);
  }, 30_000);

  it('keeps a payment answered 500 after it was sent pending and counted', async () => {
    const agent = await agentFor(seller.url);
    seller.mode = 'internal';
    const outcome = await call(agent);
    expect(errorOf(outcome)).toMatchObject({ code: 'payment_pending' });
    expect(errorOf(outcome).message).toMatch(/cannot be checked on chain/);
    expect((await agent.budget.status()).spentMicros).toBe(1000);
  });
});

describe("a seller paying to Tollbooth's development placeholders", () => {
  it.each([
    ['the development pay-to address', DEV_PAY_TO.evm],
    ['the zero address', ZERO_ADDRESSES.evm],
  ])('is refused without signing anything when it pays to %s', async (_what, payTo) => {
    const agent = await agentFor(seller.url);
    seller.payTo = payTo;
    seller.mode = 'internal';
    const before = seller.signatures.length;
    try {
      const outcome = await call(agent);
      expect(errorOf(outcome)).toMatchObject({ code: 'placeholder_pay_to' });
      expect(errorOf(outcome).message).toMatch(
        /this seller is a development server with placeholder addresses; nobody controls them — not paying/,
      );
      expect(seller.signatures.length).toBe(before);
      expect(
        await agent.spends.listSpends({ statuses: ['reserved', 'settled', 'pending', 'failed', 'cancelled'] }),
      ).toEqual([]);

      const dry = await call(agent, { dryRun: true });
      expect(dry.type).toBe('dry_run');
      if (dry.type !== 'dry_run') return;
      expect(dry.report.options.length).toBeGreaterThan(0);
      expect(dry.report.options.every((o) => o.rejected === 'placeholder_pay_to')).toBe(true);
      expect(dry.report.verdict).toMatch(
        /^would not pay: this seller is a development server with placeholder addresses/,
      );
    } finally {
      seller.payTo = undefined;
    }
  });
});
