import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { createPublicClient, parseAbiItem, type Hex, type PrivateKeyAccount } from 'viem';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PaymentRow } from '../../src/receipts/receipts.js';
import { localTransport, localViemChain } from '../support/chain/token.js';
import { startLookalikeFacilitator, type LookalikeFacilitator } from '../support/facilitator.js';
import { LOCAL_NETWORK, startPaidEnvironment, type PaidEnvironment } from '../support/paid.js';
import { encodePayment, signExactPayment } from '../support/payer.js';
import { createTestSchema, describeWithPostgres } from '../support/postgres.js';
import { json as receiptsJson } from '../support/receipts.js';
import { decodeHeader } from '../support/server.js';
import { spawnServe, type SpawnedServer } from '../support/spawn.js';

/**
 * `kill -9` of `tollbooth serve` (the built CLI) in the middle of paid load, against a real local chain and a
 * standard facilitator in another process that keeps settling while the server is dead. The facilitator's own
 * settlement log is the chain: every `AuthorizationUsed` of the token.
 */
const ARGS = { payment: 100, ratePerPeriod: 0.05, periods: 10 };
const PAYERS_PER_RUN = 5;
const PAYMENTS_PER_PAYER = 6;
const LANES = 6;

let paid: PaidEnvironment;
let facilitator: LookalikeFacilitator;
const cleanups: Array<() => Promise<void>> = [];

beforeAll(async () => {
  paid = await startPaidEnvironment(PAYERS_PER_RUN * 2);
  facilitator = await startLookalikeFacilitator({
    rpcUrl: paid.chain.rpcUrl,
    chainId: 84532,
    privateKey: paid.env.FACILITATOR_EVM_PRIVATE_KEY as Hex,
    network: LOCAL_NETWORK,
  });
}, 120_000);
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  await facilitator?.close();
  await paid?.stop();
});

const chain = () => createPublicClient({ chain: localViemChain(paid.chain), transport: localTransport(paid.chain) });
const AUTHORIZATION_USED = parseAbiItem('event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)');

/** What the chain settled: the transaction of each used authorization, by nonce. */
async function settledOnChain(): Promise<Map<string, { payer: string; transaction: string }>> {
  const logs = await chain().getLogs({ address: paid.token, event: AUTHORIZATION_USED, fromBlock: 0n });
  return new Map(
    logs.map((l) => [l.args.nonce!.toLowerCase(), { payer: l.args.authorizer!, transaction: l.transactionHash }]),
  );
}

const nonceOf = (p: PaymentPayload) => (p.payload as { authorization: { nonce: string } }).authorization.nonce;

/** Waits for a condition of the load (a bound on the wait, not a timing assertion). */
async function until(what: string, condition: () => Promise<boolean> | boolean, withinMs = 90_000): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Pays `payments` over `LANES` connections; an answer lost with the process is recorded as `lost`. */
function payAll(url: string, payments: PaymentPayload[]) {
  const answers = new Map<string, { status: number | 'lost'; transaction?: string }>();
  let next = 0;
  let stopped = false;
  const lane = async () => {
    while (!stopped && next < payments.length) {
      const payment = payments[next++]!;
      try {
        const res = await fetch(url + '/api/annuity', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'payment-signature': encodePayment(payment) },
          body: JSON.stringify(ARGS),
        });
        const header = res.headers.get('payment-response');
        const transaction = header ? (decodeHeader(header) as { transaction: string }).transaction : undefined;
        await res.arrayBuffer();
        answers.set(nonceOf(payment), { status: res.status, ...(transaction !== undefined ? { transaction } : {}) });
      } catch {
        answers.set(nonceOf(payment), { status: 'lost' });
      }
    }
  };
  const done = Promise.all(Array.from({ length: LANES }, lane));
  return { answers, done, stop: () => void (stopped = true) };
}

/** Every settled receipt names a transaction the chain made; every on-chain payment of these payers is listed. */
function expectAllListed(rows: PaymentRow[], onChain: Map<string, { payer: string; transaction: string }>): number {
  const settled = rows.filter((r) => r.status === 'settled');
  const hashes = new Set([...onChain.values()].map((s) => s.transaction));
  for (const row of settled) expect(hashes.has(row.transaction), `settled receipt ${row.transaction}`).toBe(true);
  expect(new Set(settled.map((r) => r.transaction)).size).toBe(settled.length); // one receipt per settlement
  const receipted = new Set(settled.map((r) => r.transaction));
  let unreceipted = 0;
  for (const payer of new Set([...onChain.values()].map((s) => s.payer.toLowerCase()))) {
    const missing = [...onChain.values()].filter(
      (s) => s.payer.toLowerCase() === payer && !receipted.has(s.transaction),
    ).length;
    const listed = rows.filter(
      (r) => r.payer.toLowerCase() === payer && (r.status === 'in_doubt' || r.status === 'pending'),
    ).length;
    expect(listed, `payer ${payer}: ${missing} on-chain payments without a receipt`).toBeGreaterThanOrEqual(missing);
    unreceipted += missing;
  }
  return unreceipted;
}

async function killUnderLoad(payers: PrivateKeyAccount[], store: Record<string, string>): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tollbooth-kill9-'));
  cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
  const { FACILITATOR_EVM_PRIVATE_KEY: _settledElsewhere, ...chainEnv } = paid.env;
  const env = {
    ...chainEnv,
    ...store,
    FACILITATOR_URL: facilitator.url,
    FACILITATOR_EVM_ADDRESS: facilitator.address,
    DATA_DIR: dataDir,
    LOG_LEVEL: 'info',
  };
  const before = await settledOnChain();
  const balances = await Promise.all(payers.map((p) => paid.balance(p.address)));
  facilitator.setMode({ settle: 'ok' });
  const first: SpawnedServer = await spawnServe(env);
  cleanups.push(() => first.stop());
  const probe = await fetch(first.url + '/api/annuity', { method: 'POST' });
  const entry = (decodeHeader(probe.headers.get('payment-required')) as PaymentRequired).accepts.find(
    (a) => a.network === LOCAL_NETWORK,
  ) as PaymentRequirements;
  const payments: PaymentPayload[] = [];
  for (let k = 0; k < PAYMENTS_PER_PAYER; k++) for (const p of payers) payments.push(await signExactPayment(p, entry));
  const ours = new Set(payments.map((p) => nonceOf(p).toLowerCase()));
  const mine = async () => new Map([...(await settledOnChain())].filter(([nonce]) => ours.has(nonce)));

  // Paid load; midway the facilitator starts settling without answering, then the server is killed with SIGKILL.
  const settlesBefore = facilitator.calls.settle;
  const load = payAll(first.url, payments);
  const answered = () => [...load.answers.values()].filter((a) => a.status === 200).length;
  await until('3 paid calls answered', () => answered() >= 3);
  facilitator.setMode({ settle: 'work-then-hang' }); // settlements still running finish on chain and are not answered
  await until('4 settlements unanswered', () => facilitator.calls.settle - settlesBefore - answered() >= 4);
  await until(
    'every settlement asked for is on chain',
    async () => (await mine()).size >= facilitator.calls.settle - settlesBefore,
  );
  load.stop();
  first.child.kill('SIGKILL');
  expect(await first.exited).toBe('SIGKILL');
  await load.done;
  facilitator.setMode({ settle: 'ok' });

  // Between the kill and any reconciliation: every payment the chain settled is a receipt or listed in doubt.
  const killed = await mine();
  const listedDead = (await receiptsJson(env, '--limit', '1000')).payments;
  const unreceiptedAtKill = expectAllListed(listedDead, killed);
  expect(unreceiptedAtKill).toBeGreaterThanOrEqual(4);
  const pre = [...load.answers.values()];
  expect(pre.filter((a) => a.status === 200).every((a) => /^0x[0-9a-f]{64}$/.test(a.transaction ?? ''))).toBe(true);

  // Restart: the start-up pass decides the claims the killed process left (STALE_CLAIM_SECONDS=1).
  await new Promise((r) => setTimeout(r, 1_500));
  const second = await spawnServe({ ...env, STALE_CLAIM_SECONDS: '1' });
  cleanups.push(() => second.stop());
  await second.logged('reconciled pending settlements');
  const after = await mine();
  const rows = (await receiptsJson(env, '--limit', '1000')).payments;
  expect(expectAllListed(rows, after)).toBe(0);
  const settledRows = rows.filter((r) => r.status === 'settled');
  expect(settledRows.map((r) => r.transaction).sort()).toEqual([...after.values()].map((s) => s.transaction).sort());
  for (const [nonce, answer] of load.answers)
    if (answer.status === 200) expect(answer.transaction).toBe(after.get(nonce.toLowerCase())?.transaction);
  const logs = second.logs();
  expect(logs.some((l) => String(l.msg).includes('output was lost'))).toBe(false);
  const recovered = logs.filter((l) => String(l.msg).startsWith('a claim left by a stopped process was paid on chain'));
  expect(recovered.length).toBeGreaterThanOrEqual(4);
  for (const line of recovered) expect([...after.values()].map((s) => s.transaction)).toContain(line.transaction);

  // Every payment sent again: none is charged a second time, and none is answered with another transaction.
  const again = payAll(
    second.url,
    payments.filter((p) => load.answers.has(nonceOf(p))),
  );
  await again.done;
  const final = await mine();
  for (const [nonce, answer] of again.answers) {
    const was = after.get(nonce.toLowerCase());
    if (was) expect(answer.status === 200 ? answer.transaction : was.transaction).toBe(was.transaction);
  }
  for (const [i, p] of payers.entries()) {
    const count = [...final.values()].filter((s) => s.payer.toLowerCase() === p.address.toLowerCase()).length;
    expect(await paid.balance(p.address)).toBe(balances[i]! - BigInt(entry.amount) * BigInt(count));
  }
  expect([...before.keys()].some((n) => ours.has(n))).toBe(false);
  second.child.kill('SIGTERM');
  expect(await second.exited).toBe(0);
}

describe('kill -9 of the server under paid load (the built CLI, a facilitator in another process)', () => {
  it('SQLite: every on-chain settlement stays listed while the server is dead and ends as a receipt with its transaction', async () => {
    await killUnderLoad(paid.payers.slice(0, PAYERS_PER_RUN), {});
  }, 180_000);
});

describeWithPostgres('kill -9 of the server under paid load, PostgreSQL store', () => {
  it('PostgreSQL: every on-chain settlement stays listed while the server is dead and ends as a receipt with its transaction', async () => {
    const schema = await createTestSchema('kill9');
    cleanups.push(() => schema.drop());
    await killUnderLoad(paid.payers.slice(PAYERS_PER_RUN, PAYERS_PER_RUN * 2), { DATABASE_URL: schema.url });
  }, 180_000);
});
