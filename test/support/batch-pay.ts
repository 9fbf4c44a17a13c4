/**
 * Paying a Tollbooth server's batch-settlement tool the way the official client pays, over HTTP (`@x402/fetch`) and
 * over MCP (the 402, its payload in `_meta["x402/payment"]`, the receipt handed back to the client's channel state).
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { PaymentPayload, PaymentRequired, SettleResponse } from '@x402/core/types';
import { wrapFetchWithPayment } from '@x402/fetch';
import { expect } from 'vitest';
import type { BatchPayer } from './chain/batch-settlement-parties.js';
import { decodeHeader } from './server.js';

/** One MCP call of `tool` paid by `payer`; returns the receipt the server answered with. */
export async function payOverMcp(mcp: Client, payer: BatchPayer, tool: string): Promise<SettleResponse> {
  const unpaid = await mcp.callTool({ name: tool, arguments: {} });
  const payload = await payer.client.createPaymentPayload(unpaid.structuredContent as unknown as PaymentRequired);
  const paid = await mcp.callTool({ name: tool, arguments: {}, _meta: { 'x402/payment': payload } });
  expect(paid.isError).toBeFalsy();
  const receipt = paid._meta?.['x402/payment-response'] as SettleResponse;
  await payer.client.handlePaymentResponse({
    paymentPayload: payload,
    requirements: payload.accepted,
    settleResponse: receipt,
  });
  return receipt;
}

/** A function making one paid JSON POST of `{}` to `url` with the official fetch wrapper and `payer`'s client. */
export function payOverHttp(payer: BatchPayer, url: string): () => Promise<Response> {
  const pay = wrapFetchWithPayment(fetch, payer.client);
  return () => pay(url, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
}

/** Records in `signed` the cumulative amount of the voucher a payment header carries, keeping each channel's highest. */
export function recordSignedVoucher(signed: Map<string, bigint>, header: string | null): void {
  if (!header) return;
  const { voucher } = (decodeHeader(header) as PaymentPayload).payload as {
    voucher: { channelId: string; maxClaimableAmount: string };
  };
  const id = voucher.channelId.toLowerCase();
  const max = BigInt(voucher.maxClaimableAmount);
  if (max > (signed.get(id) ?? 0n)) signed.set(id, max);
}
