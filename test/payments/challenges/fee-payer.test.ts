import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/config.js';
import { createLogger } from '../../../src/shared/log.js';
import { createFacilitator } from '../../../src/payments/facilitators/facilitator.js';
import { settleableOnly } from '../../../src/payments/facilitators/facilitator-support.js';
import { SOLANA_DEVNET } from '../../../src/shared/networks.js';
import { acceptsFor, type ChallengeBook } from '../../../src/payments/challenges/requirements.js';
import { paidTools as tools } from '../../../tools/index.js';
import { PAY_TO_ENV } from '../../support/pay-to.js';

const FEE_PAYER = '2wKupLR9q6wXYppw8Gr2NvWxKBUqm4PPJKkQfoxHDBg4';
const servers: Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((resolve) => s.close(resolve));
});

/** A facilitator look-alike whose `/supported` lists Solana devnet with its fee payer (and Base Sepolia). */
async function facilitatorListing(feePayer: string): Promise<string> {
  const server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        kinds: [
          { x402Version: 2, scheme: 'exact', network: 'eip155:84532' },
          { x402Version: 1, scheme: 'exact', network: 'base-sepolia' },
          { x402Version: 2, scheme: 'exact', network: SOLANA_DEVNET, extra: { feePayer } },
        ],
        extensions: [],
        signers: {},
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  servers.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const solanaFeePayer = (config: ReturnType<typeof loadConfig>, book: ChallengeBook) =>
  acceptsFor(
    config,
    tools.find((t) => t.name === 'annuity')!,
    book,
  ).find((a) => a.network === SOLANA_DEVNET)?.extra?.feePayer;

describe('the Solana fee payer of a remote facilitator', () => {
  it('is published as the one its /supported lists when the operator set none', async () => {
    const url = await facilitatorListing(FEE_PAYER);
    const config = loadConfig({
      ...PAY_TO_ENV,
      TOLLBOOTH_NETWORK_SET: 'testnet',
      FACILITATOR_URL_EVM: url,
      FACILITATOR_URL_SOLANA: url,
      LOG_LEVEL: 'silent',
    });
    const facilitator = await createFacilitator(config);
    const book = await settleableOnly(config, facilitator, createLogger('silent'), tools);
    expect(solanaFeePayer(config, book)).toBe(FEE_PAYER);
    await facilitator.close();
  });

  it('stays the operator’s own when SOLANA_FEE_PAYER is set', async () => {
    const url = await facilitatorListing(FEE_PAYER);
    const own = 'FzzcmrPGHCwHy6XfqKQybLLMCFhgX7R33axfwNwzrxbw';
    const config = loadConfig({
      ...PAY_TO_ENV,
      TOLLBOOTH_NETWORK_SET: 'testnet',
      FACILITATOR_URL: url,
      SOLANA_FEE_PAYER: own,
      LOG_LEVEL: 'silent',
    });
    const facilitator = await createFacilitator(config);
    const book = await settleableOnly(config, facilitator, createLogger('silent'), tools);
    expect(solanaFeePayer(config, book)).toBe(own);
    await facilitator.close();
  });

  it('is not taken when it is not a Solana address', async () => {
    const url = await facilitatorListing('not an address <script>');
    const config = loadConfig({
      ...PAY_TO_ENV,
      TOLLBOOTH_NETWORK_SET: 'testnet',
      FACILITATOR_URL: url,
      LOG_LEVEL: 'silent',
    });
    const facilitator = await createFacilitator(config);
    const book = await settleableOnly(config, facilitator, createLogger('silent'), tools);
    expect(solanaFeePayer(config, book)).not.toBe('not an address <script>');
    await facilitator.close();
  });
});
