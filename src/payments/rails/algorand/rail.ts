/**
 * Algorand `exact` (docs/payments.md#algorand-exact): the payer signs an atomic group holding an `axfer` of the ASA to
 * our pay-to and leaves our fee-payer transaction (a 0-ALGO payment to ourselves carrying the pooled fee)
 * unsigned; we check the group, sign our transaction and submit the group, then wait for confirmation.
 *
 * Choice: the official `@x402/avm` 2.26 schemes, not a re-implementation. Its server scheme, facilitator
 * scheme and client scheme work unmodified with our pinned `@x402/core` 2.27: at run time they take only
 * core's utility functions, from their own nested core 2.26, and share no classes with our core (types are
 * cast at the boundary). The rail and e2e tests pay with the official client and settle with the official facilitator
 * against a look-alike algod that checks signatures and contents, so a break in that pairing fails them.
 * The official facilitator is wrapped by `CheckedAvmFacilitator`, which adds the checks it leaves to algod
 * or lacks: transactions for the requirement's network (genesis hash), a group id that is really the
 * group's hash, and at most one transaction for the fee payer to sign. It also reports a group that was
 * submitted but not seen confirmed as `settlement_pending` with its txid (the official scheme calls that a
 * failure although the money may have moved), and settles such a payment again by asking algod, not by
 * submitting twice.
 *
 * Network ids: the specification (and our table) writes `algorand:<full genesis hash>`; `@x402/avm` uses the
 * 32-character CAIP-2 form and normalizes the long form itself. Both forms work here (the official scheme
 * normalizes, our genesis check accepts either); only mainnet and testnet are supported, because the
 * official client and facilitator refuse any other genesis hash. algod comes from the entry's `rpcUrl`
 * (unset: the official default, AlgoNode's public algod for that network).
 *
 * `extra.tag` (`tollbooth`): informational. It names the merchant application that issued the requirement,
 * for wallets, logs and explorers, and is echoed in `accepted.extra` like every advertised field (the
 * broker's exact match refuses a payment that changes it). It does not bind the transaction: the official
 * client writes its own note (`x402-payment-v2-<ms>`) and no lease and cannot be asked to carry the tag, so
 * requiring a note prefix or lease would refuse every official payment. What binds a payment to the
 * requirement is the checked content: asset, amount, receiver, network and group.
 *
 * Replay key: the txid of the payment transaction. It covers the genesis hash and the group id, and algod
 * refuses a txid already in the ledger, so the chain itself makes it single-use.
 */
import type { x402Facilitator } from '@x402/core/facilitator';
import type { SchemeNetworkFacilitator } from '@x402/core/types';
import { toFacilitatorAvmSigner } from '@x402/avm';
import { ExactAvmScheme as ExactAvmFacilitatorScheme } from '@x402/avm/exact/facilitator';
import algosdk from 'algosdk';
import type { NetworkEntry } from '../../../shared/networks.js';
import { CheckedAvmFacilitator } from './facilitator.js';
import { algodUrlFor, lookupAlgorandPayment } from '../../../shared/algorand-lookup.js';
import { guardAvmSigner } from './rpc.js';
import { algorandNetworkKind } from '../../../shared/algorand-txns.js';
import { algorandExactServer } from './server.js';
import { ALGORAND_EXACT } from '../info.js';
import type { LoadedRail, InProcessSettings } from '../rail.js';

/** `exact` on Algorand with the official `@x402/avm` schemes; our fee payer is `FACILITATOR_ALGORAND_MNEMONIC`. */
export const algorandExactRail: LoadedRail = {
  ...ALGORAND_EXACT,
  ...algorandExactServer,
  registerInProcess(facilitator: x402Facilitator, nets: readonly NetworkEntry[], config: InProcessSettings): string[] {
    const secretKey = config.facilitator.keys.algorand;
    if (!secretKey) return [];
    const feePayer = algosdk.encodeAddress(secretKey.slice(32));
    const keyBase64 = Buffer.from(secretKey).toString('base64');
    const done: string[] = [];
    for (const net of nets) {
      const kind = algorandNetworkKind(net.id);
      if (!kind) continue;
      const urls = net.rpcUrl ? (kind === 'testnet' ? { testnetUrl: net.rpcUrl } : { mainnetUrl: net.rpcUrl }) : {};
      const guarded = guardAvmSigner(toFacilitatorAvmSigner(keyBase64, urls));
      const official = new ExactAvmFacilitatorScheme(guarded.signer) as unknown as SchemeNetworkFacilitator;
      const algod = { url: algodUrlFor(net), timeoutMs: config.facilitator.timeoutMs };
      facilitator.register(
        net.id as `${string}:${string}`,
        new CheckedAvmFacilitator(official, [feePayer], algod, guarded.resend),
      );
      done.push(net.id);
    }
    return done;
  },
  lookup: (pending, net, config) => lookupAlgorandPayment(pending, net, config.facilitator.timeoutMs),
};
