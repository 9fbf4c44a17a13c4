/**
 * A facilitator thread entry for tests (RuntimeOptions.facilitatorEntry), standing in for
 * src/payments/facilitators/facilitator-worker.ts: the real in-process facilitator, except that with
 * TOLLBOOTH_TEST_VERIFY_ERROR=<reason> every verification throws an x402 VerifyError with that reason (as a remote
 * facilitator's client does), and with TOLLBOOTH_TEST_SETTLE_GATE=<file> every settlement waits until that file
 * exists before it goes to the chain (the thread keeps answering other messages meanwhile); with
 * TOLLBOOTH_TEST_SETTLE_ERROR=<reason> every settlement fails with that reason and a facilitator's own error text,
 * sending nothing to the chain.
 */
import { existsSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { VerifyError } from '@x402/core/types';
import { serveFacilitatorThread } from '../../src/payments/facilitators/facilitator-serve.js';

await serveFacilitatorThread((facilitator) => ({
  getSupported: () => facilitator.getSupported(),
  verify: async (payload, requirements) => {
    const reason = process.env.TOLLBOOTH_TEST_VERIFY_ERROR;
    if (reason)
      throw new VerifyError(400, { isValid: false, invalidReason: reason, invalidMessage: 'refused in test' });
    return facilitator.verify(payload, requirements);
  },
  settle: async (payload, requirements) => {
    const gate = process.env.TOLLBOOTH_TEST_SETTLE_GATE;
    while (gate && !existsSync(gate)) await sleep(20);
    const reason = process.env.TOLLBOOTH_TEST_SETTLE_ERROR;
    if (reason) {
      const errorMessage = 'facilitator internal: node rpc-7 rejected the transfer';
      return { success: false, errorReason: reason, errorMessage, transaction: '', network: requirements.network };
    }
    return facilitator.settle(payload, requirements);
  },
}));
