import { rmSync } from 'node:fs';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentDataDir, runCli } from '../support/agent.js';
import { startOriginSeller, type OriginSeller } from '../support/origin-seller.js';
import { LOCAL_NETWORK, startPaidEnvironment, type PaidEnvironment } from '../support/paid.js';

let paid: PaidEnvironment;
let seller: OriginSeller;
let env: Record<string, string>;
const payTo = privateKeyToAccount(generatePrivateKey()).address;
const movedTo = privateKeyToAccount(generatePrivateKey()).address;
const dataDir = agentDataDir();

beforeAll(async () => {
  paid = await startPaidEnvironment(1);
  seller = await startOriginSeller(paid, payTo);
  const key = paid.chain.accounts.find((a) => a.address === paid.payers[0]!.address)!.privateKey;
  env = {
    DATA_DIR: dataDir,
    NETWORKS_JSON: paid.env.NETWORKS_JSON!,
    WALLET_EVM_PRIVATE_KEY: key,
    BUDGET_NETWORKS: LOCAL_NETWORK,
  };
}, 120_000);
afterAll(async () => {
  await seller?.close();
  await paid?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const fetchQuote = (query: string, ...flags: string[]) =>
  runCli(['fetch', `${seller.url}/quote${query}`, ...flags], env);
const payer = () => paid.balance(paid.payers[0]!.address);

describe('tollbooth fetch with sellers it does not know', () => {
  it('refuses a price more than AGENT_PRICE_DRIFT above --expect-price: exit 3, nothing signed or paid', async () => {
    const before = { balance: await payer(), signed: seller.signed() };
    const run = await fetchQuote('?x=1', '--expect-price', '0.0005');
    expect(run.code, run.stderr).toBe(3);
    expect(run.stderr).toContain('price_drift');
    expect({ balance: await payer(), signed: seller.signed() }).toEqual(before);
  });

  it('pins the pay-to at the first payment; a changed one is paid only with --yes, and spending shows the origin', async () => {
    expect((await fetchQuote('?x=2')).code).toBe(0);
    seller.set({ payTo: movedTo });
    try {
      const before = { balance: await payer(), signed: seller.signed() };
      const refusedRun = await fetchQuote('?x=3');
      expect(refusedRun.code, refusedRun.stderr).toBe(3);
      expect(refusedRun.stderr).toContain('pay_to_changed');
      expect({ balance: await payer(), signed: seller.signed() }).toEqual(before);

      const approved = await fetchQuote('?x=4', '--yes');
      expect(approved.code, approved.stderr).toBe(0);
      expect(await paid.balance(movedTo)).toBe(1000n);
    } finally {
      seller.set({ payTo });
    }
    const spending = await runCli(['spending'], env);
    expect(spending.code).toBe(0);
    expect(spending.stdout.match(new RegExp(`at ${seller.url}`, 'g'))).toHaveLength(2);
  });
});
