import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterEach, describe, expect, it } from 'vitest';
import { startListingFacilitator, type ListingFacilitator } from '../support/batch-facilitator.js';
import { startTestServer, type TestServer } from '../support/server.js';
import { sideEffectTool } from '../support/tools.js';

const NETWORK = 'eip155:84532';
const echo = sideEffectTool('batch-upkeep-echo', async () => undefined);
const env = (batch: 'on' | 'off', facilitatorUrl: string) => ({
  TOLLBOOTH_NETWORK_SET: 'testnet',
  FACILITATOR_URL: facilitatorUrl,
  PAY_TO_EVM: privateKeyToAccount(generatePrivateKey()).address,
  MPP: 'off',
  BATCH_SETTLEMENT: batch,
  BATCH_RECEIVER_AUTHORIZER_KEY: generatePrivateKey(),
});

let facilitator: ListingFacilitator | undefined;
let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  await facilitator?.close();
});

describe('the batch-settlement claim loop in the server', () => {
  it('runs when the seller offers batch settlement: /metrics shows its channel gauges', async () => {
    facilitator = await startListingFacilitator(NETWORK);
    server = await startTestServer(env('on', facilitator.url), { tools: [echo] });
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toContain(`tollbooth_batch_channels_open{network="${NETWORK}"} 0`);
    expect(metrics).toContain(`tollbooth_batch_unclaimed_atomic{network="${NETWORK}"} 0`);
    // No channel has anything to claim: the loop asked the facilitator for nothing.
    expect(facilitator.calls.settle).toBe(0);
  });

  it('does not run with batch settlement off', async () => {
    facilitator = await startListingFacilitator(NETWORK);
    server = await startTestServer(env('off', facilitator.url), { tools: [echo] });
    const metrics = await (await fetch(`${server.url}/metrics`)).text();
    expect(metrics).toContain('tollbooth_calls_in_flight');
    expect(metrics).not.toContain('tollbooth_batch_channels_open');
  });
});
