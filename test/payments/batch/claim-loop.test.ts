import { afterAll, beforeAll, expect, it } from 'vitest';
import { PostgresStore } from '../../../src/store/dialects/postgres/store.js';
import {
  type BatchSettlementEnvironment,
  readOnchainChannel,
  startBatchSettlementEnvironment,
} from '../../support/chain/batch-settlement.js';
import {
  type BatchParties,
  batchPayer,
  paidCall,
  payloadChannel,
} from '../../support/chain/batch-settlement-parties.js';
import { claimLoopOn, partiesOnStore } from '../../support/batch-claims.js';
import { createTestSchema, describeWithPostgres, type TestSchema } from '../../support/postgres.js';

const PRICE = 1_000n;
const CALLS = 6;

let env: BatchSettlementEnvironment;
let schema: TestSchema;
const stores: PostgresStore[] = [];
const parties: BatchParties[] = [];

describeWithPostgres('two instances with their claim loops on one PostgreSQL', () => {
  beforeAll(async () => {
    env = await startBatchSettlementEnvironment(2);
    schema = await createTestSchema('tollbooth_claim_loop');
    for (let i = 0; i < 2; i++) stores.push(await PostgresStore.open(schema.url));
    for (const store of stores) parties.push(await partiesOnStore(env, store, PRICE));
  }, 60_000);

  afterAll(async () => {
    await Promise.all(stores.map((s) => s.close()));
    await schema?.drop();
    await env?.stop();
  });

  it('claim the vouchers of both instances once: the pay-to gets exactly their sum, no claim above a voucher', async () => {
    const payer = batchPayer(env, env.payers[0]!);
    // One channel, its calls answered by either instance (the channel lives in the shared store).
    const first = await paidCall(parties[0]!, payer);
    for (let i = 1; i < CALLS; i++) await paidCall(parties[i % 2]!, payer);
    const { channelId } = payloadChannel(first.payload);
    const payToBefore = await env.balance(env.payTo);
    const loops = stores.map((store, i) => claimLoopOn(env, parties[i]!, store, parties[i]!.facilitatorClient));
    const outcomes = await Promise.all(loops.map((loop) => loop.tick()));
    const claimed = outcomes.flatMap((o) => o ?? []).reduce((sum, o) => sum + o.claimed, 0n);
    expect(claimed).toBe(BigInt(CALLS) * PRICE);
    expect((await readOnchainChannel(env.chain, channelId)).totalClaimed).toBe(BigInt(CALLS) * PRICE);
    expect(await env.balance(env.payTo)).toBe(payToBefore + BigInt(CALLS) * PRICE);
    const claims = (await stores[0]!.ledger.listReceipts()).filter((r) => r.kind === 'claim');
    expect(claims).toHaveLength(1);
    expect(claims[0]).toMatchObject({ status: 'settled', amount: (BigInt(CALLS) * PRICE).toString() });
  });

  it('skip a round while another instance holds the round lease', async () => {
    const now = Date.now();
    expect(await stores[1]!.batchUpkeep.takeLease('batch-claims', now + 60_000, now)).toBe(true);
    const loop = claimLoopOn(env, parties[0]!, stores[0]!, parties[0]!.facilitatorClient);
    expect(await loop.tick(now)).toBeUndefined();
    await stores[1]!.batchUpkeep.releaseLease('batch-claims', now + 60_000);
    expect(await loop.tick(now)).toHaveLength(1);
  });
});
