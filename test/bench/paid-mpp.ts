/**
 * The MPP side of the paid comparison: a pool of `Authorization: Payment` credentials for Tollbooth's POST
 * /api/annuity, each answering its own fresh challenge (one bare 402 per credential, fetched before the run that uses
 * it) and carrying a fresh EIP-3009 authorization signed by mppx's EVM charge client (nonce = the challenge's hash).
 */
import { Challenge } from 'mppx';
import { charge } from 'mppx/evm/client';
import { concat, getAddress, keccak256 } from 'viem';
import type { PrivateKeyAccount } from 'viem/accounts';
import { PaymentPool } from './paid-load.js';
import { SALE } from './paid-servers.js';

const CHAIN_ID = Number(SALE.network.split(':')[1]);

/** The sale's `evm/charge` challenges in one bare 402 of POST /api/annuity, or why there are none. */
export async function mppChallenges(
  serverUrl: string,
): Promise<{ challenges: Challenge.Challenge[] } | { missing: string }> {
  const res = await bareProbe(`${serverUrl}/api/annuity`);
  const header = res.headers.get('www-authenticate');
  if (res.status !== 402) return { missing: `the bare POST answered ${res.status}, not 402` };
  if (!header || !/(^|[\s,])Payment\s/i.test(header))
    return { missing: 'its 402 carries no WWW-Authenticate: Payment challenge' };
  const challenges = Challenge.deserializeList(header).filter((c) => {
    const r = c.request as {
      currency?: string;
      methodDetails?: { chainId?: number };
      amount?: string;
      recipient?: string;
    };
    return (
      c.method === 'evm' &&
      c.intent === 'charge' &&
      r.methodDetails?.chainId === CHAIN_ID &&
      r.currency?.toLowerCase() === SALE.asset.toLowerCase()
    );
  });
  return challenges.length > 0
    ? { challenges }
    : { missing: `its Payment challenges offer no evm/charge on ${SALE.network} for the sale's asset` };
}

/** A bare POST; a kept-alive connection the server closed meanwhile is retried on a new one (at most twice). */
async function bareProbe(url: string): Promise<Response> {
  for (let attempt = 0; ; attempt++) {
    try {
      const res = await fetch(url, { method: 'POST' });
      await res.arrayBuffer();
      return res;
    } catch (err) {
      if (attempt >= 2) throw err;
    }
  }
}

/** MPP credentials signed ahead, one per fresh challenge, each handed out once. */
export class MppPool extends PaymentPool {
  readonly paymentHeader = 'authorization';
  readonly receiptHeader = 'payment-receipt';
  /** Milliseconds spent fetching challenges (part of the preparation, never of a timed run). */
  challengeMs = 0;

  constructor(
    private readonly payers: readonly PrivateKeyAccount[],
    private readonly serverUrl: string,
  ) {
    super();
  }

  async fill(count: number): Promise<void> {
    const asset = getAddress(SALE.asset);
    const methods = this.payers.map((account) =>
      charge({ account, authorization: { name: SALE.tokenName, version: SALE.tokenVersion }, networks: [CHAIN_ID] }),
    );
    while (this.headers.length - this.head < count) {
      const t = performance.now();
      const found = await mppChallenges(this.serverUrl);
      this.challengeMs += performance.now() - t;
      if ('missing' in found) throw new Error(`${this.serverUrl}: ${found.missing}`);
      const i = this.headers.length % this.payers.length;
      const credential = await methods[i]!.createCredential({ challenge: found.challenges[0] as never, context: {} });
      const nonce = keccak256(new TextEncoder().encode(`${found.challenges[0]!.id}${found.challenges[0]!.realm}`));
      this.headers.push(credential);
      this.txs.push(keccak256(concat([asset, this.payers[i]!.address, nonce])));
    }
  }

  /** A `Payment-Receipt` (base64url JSON, `reference` = the transaction) read as success and transaction. */
  receiptOf(raw: string): { success?: boolean; transaction?: string } {
    const r = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as { status?: string; reference?: string };
    return { success: r.status === 'success', ...(r.reference ? { transaction: r.reference } : {}) };
  }
}
