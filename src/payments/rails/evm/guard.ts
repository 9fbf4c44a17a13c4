/**
 * A guard around the official in-process EVM facilitator schemes of @x402/evm 2.27 (exact, upto, v1 exact), so that
 * a throttled, failing or hanging RPC ends a paid call with an error and never ends the process.
 *
 * Why: the exact and upto facilitators start an `eth_getCode` on the asset (`startAssetContractCheck`) at the top of
 * verification and await it only on the path that reaches the end; every early return (signature not valid — which
 * is also what a failed `eth_getCode` on the payer turns into —, wrong recipient, expiry, amount) abandons it. When
 * that RPC request fails (429, 5xx, unreachable), the promise the library created in its own async function
 * `validateAssetIsContract` rejects with no handler: an unhandled rejection, and Node ends the process. Handing the
 * library a pre-handled promise from our signer's `getCode` cannot help, because the library awaits it and throws a
 * new error from its own async function. So the check is made to never fail: this wrapper asks the chain for the
 * asset's code itself, awaited, before the library runs (a failure is an ordinary facilitator error), and the signer
 * answers the library's own lookup of that asset from memory without touching the RPC (see `KnownContracts`).
 * The v1 scheme has no eager check (every RPC call of it is awaited) but gets the same wrapper for the mapping below.
 *
 * The library also reports RPC failures as verdicts on the payment (a failed `eth_getCode` on the payer reads as
 * "invalid signature"). The wrapper records per call whether an RPC request failed and whether a transaction was
 * handed to the node, and then reports a refusal as the facilitator being unavailable, not the payment as invalid.
 */
import type {
  FacilitatorContext,
  Network,
  PaymentPayload,
  PaymentRequirements,
  SchemeNetworkFacilitator,
  SettleResponse,
  VerifyResponse,
} from '@x402/core/types';
import { getAddress, type Hex } from 'viem';
import type { PaymentCode } from '../../../shared/errors.js';
import { chainText, noteRpcFailure, rpcErrorText, settleTraced, traceCall } from '../rpc-trace.js';

/** True when an error from viem is the RPC failing (no answer, HTTP error, timeout, unreadable answer), not the chain refusing (a revert). */
export function isRpcOutage(err: unknown): boolean {
  return !/revert/i.test(chainText(err));
}

/** Records an RPC failure of a signer method in the current facilitator call; reverts are answers, not failures. */
export function noteEvmFailure(err: unknown): void {
  if (isRpcOutage(err)) noteRpcFailure(rpcErrorText(err));
}

const HEX = /^0x[0-9a-fA-F]*$/;

/**
 * Contract code of the assets this facilitator has seen deployed. The library's eager asset check is answered from
 * here, so it never makes an RPC request that could fail unobserved. A contract's code cannot disappear, so a yes is
 * kept for the life of the process; a no is never kept (it is asked again).
 */
export class KnownContracts {
  private readonly codes = new Map<string, Hex>();

  /** `fetchCode` is the raw `eth_getCode` of the chain's RPC (its JSON-RPC `result`, unparsed). */
  constructor(private readonly fetchCode: (address: Hex) => Promise<unknown>) {}

  /** The remembered code of a known contract, or undefined when the address was not seen deployed. */
  codeOf(address: string): Hex | undefined {
    return this.codes.get(address.toLowerCase());
  }

  /** Whether `asset` is a deployed contract; throws when the RPC fails or answers something that is not code. */
  async isContract(asset: string): Promise<boolean> {
    if (this.codeOf(asset)) return true;
    const code = await this.fetchCode(getAddress(asset));
    if (typeof code !== 'string' || !HEX.test(code))
      throw new Error(
        `the RPC answered eth_getCode with something that is not code (${JSON.stringify(code)?.slice(0, 60)})`,
      );
    if (code === '0x') return false;
    this.codes.set(asset.toLowerCase(), code as Hex);
    return true;
  }
}

const ASSET_NOT_CONTRACT = 'asset_not_deployed_contract';

/** The error a verification throws when the RPC failed; the broker answers it as `facilitator_unavailable` (502). */
export class EvmRpcUnavailableError extends Error {
  override readonly name = 'EvmRpcUnavailableError';
}

/** An official EVM facilitator scheme behind the asset pre-check and the RPC-failure mapping described above. */
export class GuardedEvmScheme implements SchemeNetworkFacilitator {
  readonly scheme: string;
  readonly caipFamily: string;

  constructor(
    private readonly inner: SchemeNetworkFacilitator,
    private readonly assets: KnownContracts,
  ) {
    this.scheme = inner.scheme;
    this.caipFamily = inner.caipFamily;
  }

  /** The wrapped scheme's `extra` for `/supported`. */
  getExtra(network: Network): Record<string, unknown> | undefined {
    return this.inner.getExtra(network);
  }

  /** The wrapped scheme's settling addresses. */
  getSigners(network: string): string[] {
    return this.inner.getSigners(network);
  }

  /** Checks the asset first, then runs the official verification; a refusal that followed an RPC failure throws. */
  verify(
    payload: PaymentPayload,
    requirements: PaymentRequirements,
    context?: FacilitatorContext,
  ): Promise<VerifyResponse> {
    return traceCall(async (trace) => {
      let deployed: boolean;
      try {
        deployed = await this.assets.isContract(requirements.asset);
      } catch (err) {
        throw new EvmRpcUnavailableError(`The chain's RPC failed while checking the asset: ${rpcErrorText(err)}`);
      }
      if (!deployed)
        return {
          isValid: false,
          invalidReason: ASSET_NOT_CONTRACT,
          invalidMessage: `No contract is deployed at ${requirements.asset} on ${requirements.network}.`,
        };
      const result = await this.inner.verify(payload, requirements, context);
      if (!result.isValid && trace.rpcFailure)
        throw new EvmRpcUnavailableError(`The chain's RPC failed during verification: ${trace.rpcFailure}`);
      return result;
    });
  }

  /**
   * Checks the asset first, then lets the official scheme settle. Until a transaction was handed to the node, an RPC
   * failure ends in `facilitator_unavailable` with nothing charged; after that, the library's own answer stands
   * (settled, failed on chain, or `settlement_pending`), and a throw is left to the broker (outcome unknown).
   */
  settle(
    payload: PaymentPayload,
    requirements: PaymentRequirements,
    context?: FacilitatorContext,
  ): Promise<SettleResponse> {
    const base = { transaction: '', network: requirements.network as Network };
    const unavailable = (why: string): SettleResponse => ({
      ...base,
      success: false,
      errorReason: 'facilitator_unavailable' satisfies PaymentCode,
      errorMessage: `The chain's RPC failed before any transaction was sent (${why}).`,
    });
    return traceCall(async (trace) => {
      let deployed: boolean;
      try {
        deployed = await this.assets.isContract(requirements.asset);
      } catch (err) {
        return unavailable(rpcErrorText(err));
      }
      if (!deployed)
        return {
          ...base,
          success: false,
          errorReason: ASSET_NOT_CONTRACT,
          errorMessage: `No contract is deployed at ${requirements.asset}.`,
        };
      return settleTraced(trace, () => this.inner.settle(payload, requirements, context), unavailable);
    });
  }
}
