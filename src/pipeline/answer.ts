/**
 * What a transport calls: the payment it found is read (an MPP credential decoded once, into a typed value), the call
 * runs through `invoke`, and the result becomes the one answer every transport writes out (src/payments/answer/).
 * Transports enter the payment layer here only.
 */
import { answerFor, bothProtocolsAnswer } from '../payments/answer/answer.js';
import type { CarriedPayment, PaymentAnswer } from '../payments/answer/types.js';
import type { RawPayment } from '../payments/reading/decode.js';
import { decodeCredential } from '../payments/mpp/credential.js';
import { x402VersionOf } from '../tool/price.js';
import { isPaid } from '../tool/tool.js';
import { invoke } from './invoke.js';
import type { CallRequest, InvokeDeps } from './call.js';

/** A call as a transport hands it over: the payment as found on the request, not yet read. */
export interface AnswerRequest extends Omit<CallRequest, 'proof'> {
  proof?: CarriedPayment | undefined;
}

/** Runs one call (through `invoke`) and answers it; a request carrying both protocols is refused before anything runs. */
export async function answerCall(deps: InvokeDeps, req: AnswerRequest): Promise<PaymentAnswer> {
  const { tool: listed, proof: carried, ...rest } = req;
  // A free tool: no payment is read, and its answer carries no receipt.
  if (!isPaid(listed)) return answerFor(await invoke(deps, { ...rest, tool: listed }), { tool: listed, version: 2 });
  if (carried?.protocol === 'both') return bothProtocolsAnswer();
  let proof: RawPayment | undefined;
  let credential: { challengeId?: string } | undefined;
  if (carried?.protocol === 'mpp') {
    const decoded = await decodeCredential(carried);
    proof = { source: 'mpp', credential: decoded };
    credential = decoded.ok ? { challengeId: decoded.credential.challenge.id } : {};
  } else if (carried) proof = { source: carried.source, value: carried.value };
  const face = deps.broker.v2Face(listed);
  const tool = face && paysFace(carried, req.transport) ? face : listed;
  const result = await invoke(deps, { ...rest, tool, proof });
  // MPP offers stay those of the tool as listed; a bare HTTP probe of a tool with a v2 face shows it in the v2 header.
  const mpp = { gate: deps.broker.mpp, tool: listed };
  const companion = face && !carried && tool === listed ? { companion: deps.broker.challenge(face) } : {};
  return answerFor(result, {
    tool,
    version: x402VersionOf(tool),
    mpp,
    ...companion,
    ...(credential && { credential }),
  });
}

/**
 * Whether a call of a `base-v1` tool that has a v2 face pays that face: an x402 version 2 payment (PAYMENT-SIGNATURE,
 * or a version 2 payload in MCP's `_meta`), or an MCP call without payment (the x402 MCP binding is version 2). A
 * version 1 payment, an MPP credential and a bare HTTP probe are the tool's as listed.
 */
function paysFace(carried: CarriedPayment | undefined, transport: string): boolean {
  if (carried === undefined) return transport === 'mcp';
  if (carried.protocol !== 'x402') return false;
  if (carried.source === 'payment-signature') return true;
  const value = carried.value as { x402Version?: unknown } | null;
  return carried.source === 'mcp-meta' && typeof value === 'object' && value?.x402Version === 2;
}

/**
 * A GET on a paid POST route, which only a `batch-settlement` refund may use (the official client probes and asks
 * for a refund with GET): a bare one gets the refund probe's challenge while the tool offers the scheme, one carrying
 * a refund request is answered as on a GET route; undefined for any other GET (the transport answers 405).
 */
export async function answerRefundOnly(deps: InvokeDeps, req: AnswerRequest): Promise<PaymentAnswer | undefined> {
  const { tool: listed, proof: carried, ...rest } = req;
  if (!isPaid(listed)) return undefined;
  // A refund is x402 version 2: a `base-v1` tool takes it on its v2 face.
  const tool = deps.broker.v2Face(listed) ?? listed;
  if (carried === undefined) {
    if (!deps.broker.refundChallenge(tool)) return undefined;
  } else if (carried.protocol !== 'x402' || carried.source !== 'payment-signature') return undefined;
  else if (!deps.broker.isRefundProof(carried)) return undefined;
  const proof: RawPayment | undefined = carried && { source: carried.source, value: carried.value };
  const result = await invoke(deps, { ...rest, tool, input: undefined, proof, refundOnly: true });
  return answerFor(result, { tool, version: x402VersionOf(tool) });
}
