/**
 * The server part of Algorand `exact` (see algorand/rail.ts): the official `@x402/avm` server scheme and the reading
 * of a payment (its transaction id as the replay key, its validity window bounded), without the facilitator side.
 */
import type { SchemeNetworkServer } from '@x402/core/types';
import { ExactAvmScheme as ExactAvmServerScheme } from '@x402/avm/exact/server';
import { paymentTxnOf } from '../../../shared/algorand-txns.js';
import type { Identified, RailServer } from '../rail.js';
import { ALGORAND_ROUND_SECONDS, longestWindowRounds, windowRefusal } from '../window.js';

/** Reads an Algorand `exact` payment: the payment transaction of its group, within its window. */
export const algorandExactServer: RailServer = {
  serverScheme: () => new ExactAvmServerScheme() as unknown as SchemeNetworkServer,
  identify(payload, requirements): Identified {
    const txn = paymentTxnOf(payload);
    if (!txn) {
      return {
        ok: false,
        message:
          'The Algorand payment needs `paymentGroup` (base64 msgpack transactions) and a `paymentIndex` pointing at a transaction that decodes.',
      };
    }
    // Without the current round, the window's length is what is bounded here; a `firstValid` still ahead is refused
    // by the facilitator's simulation (the group cannot be valid yet), which releases the claim.
    const rounds = BigInt(txn.lastValid) - BigInt(txn.firstValid);
    if (rounds > longestWindowRounds(requirements.maxTimeoutSeconds))
      return windowRefusal(
        `validity window of ${rounds} rounds (\`lastValid\` − \`firstValid\`, ~${ALGORAND_ROUND_SECONDS} s a round)`,
        requirements.maxTimeoutSeconds,
      );
    return { ok: true, replayKey: `algorand-exact:${txn.txID()}`, payer: txn.sender.toString() };
  },
};
