/**
 * What the simulation of a Stellar `exact` settlement must show: success without archived entries, exactly the one
 * SEP-41 transfer the payment names among its contract events, and resource fees within the sponsored ceiling.
 */
import { Address, BASE_FEE, rpc, scValToNative, xdr } from '@stellar/stellar-sdk';
import type { PaymentRequirements } from '@x402/core/types';
import type { StellarFailure, StellarTransfer } from './checks.js';

/** The amount of a SEP-41 / SAC transfer event's data: an i128, or a map with `amount` (muxed destinations). */
function eventAmount(data: xdr.ScVal): bigint | undefined {
  const value: unknown = scValToNative(data);
  if (typeof value === 'bigint') return value;
  const amount = (value as { amount?: unknown } | null)?.amount;
  return typeof amount === 'bigint' ? amount : undefined;
}

/**
 * Checks a successful simulation's contract events: exactly one `transfer` event, emitted by the asset contract,
 * moving exactly `amount` from `from` to `payTo`, and no other contract event (no other balance change).
 */
export function checkTransferEvents(
  events: readonly xdr.DiagnosticEvent[],
  t: StellarTransfer,
  req: PaymentRequirements,
): StellarFailure | undefined {
  try {
    return checkEvents(events, t, req);
  } catch {
    return {
      reason: 'invalid_exact_stellar_payload_event_malformed',
      message: 'The simulated call emits an event that cannot be read as a SEP-41 transfer.',
    };
  }
}

function checkEvents(
  events: readonly xdr.DiagnosticEvent[],
  t: StellarTransfer,
  req: PaymentRequirements,
): StellarFailure | undefined {
  const transfers: { from: string; to: string; amount: bigint | undefined }[] = [];
  for (const diagnostic of events) {
    const event = diagnostic.event();
    if (event.type().name !== 'contract') continue;
    const topics = event.body().v0().topics();
    const name = topics[0]?.switch().name === 'scvSymbol' ? topics[0].sym().toString() : '';
    const contractId = event.contractId();
    if (name !== 'transfer' || topics.length < 3 || !contractId) {
      return {
        reason: 'invalid_exact_stellar_payload_event_not_transfer',
        message: `The simulated call emits a "${name}" event besides the transfer.`,
      };
    }
    if (Address.fromScAddress(xdr.ScAddress.scAddressTypeContract(contractId)).toString() !== req.asset) {
      return {
        reason: 'invalid_exact_stellar_payload_event_wrong_asset',
        message: 'The simulated transfer event comes from another contract than the asset.',
      };
    }
    transfers.push({
      from: Address.fromScVal(topics[1]!).toString(),
      to: Address.fromScVal(topics[2]!).toString(),
      amount: eventAmount(event.body().v0().data()),
    });
  }
  if (transfers.length !== 1) {
    return {
      reason:
        transfers.length === 0
          ? 'invalid_exact_stellar_payload_no_transfer_events'
          : 'invalid_exact_stellar_payload_multiple_transfers',
      message: `The simulated call emits ${transfers.length} transfer events; exactly one is expected.`,
    };
  }
  const [event] = transfers as [(typeof transfers)[number]];
  if (event.from !== t.from || event.to !== req.payTo || event.amount !== BigInt(req.amount)) {
    return {
      reason: 'invalid_exact_stellar_payload_event_mismatch',
      message: 'The simulated transfer event does not move exactly the price from the payer to the pay-to address.',
    };
  }
  return undefined;
}

/** Checks a simulation of the transfer: it succeeds, restores nothing, emits only the transfer and fits the fee ceiling. */
export function checkSimulation(
  sim: rpc.Api.SimulateTransactionResponse,
  transfer: StellarTransfer,
  req: PaymentRequirements,
  maxFeeStroops: number | bigint,
): StellarFailure | undefined {
  if (!rpc.Api.isSimulationSuccess(sim)) {
    const error = rpc.Api.isSimulationError(sim) ? sim.error : 'unknown simulation result';
    return {
      reason: 'invalid_exact_stellar_payload_simulation_failed',
      message: `The network refuses the transfer: ${error.split('\n')[0]}`,
    };
  }
  if (rpc.Api.isSimulationRestore(sim)) {
    return {
      reason: 'invalid_exact_stellar_payload_simulation_failed',
      message: 'The transfer touches archived ledger entries; restore them first.',
    };
  }
  const events = checkTransferEvents(sim.events, transfer, req);
  if (events) return events;
  const max = BigInt(maxFeeStroops);
  if (BigInt(sim.minResourceFee) + BigInt(BASE_FEE) > max) {
    return {
      reason: 'invalid_exact_stellar_payload_fee_exceeds_maximum',
      message: `Settling would cost ${sim.minResourceFee} stroops of resource fees; at most ${max} in total is sponsored.`,
    };
  }
  return undefined;
}
