/**
 * The facilitator thread's entry module (facilitator-thread.ts starts it): serves the in-process facilitator.
 * Built to `dist/bin/facilitator-worker.js` beside the bundled CLI (scripts/bundle.mjs) and to `dist/src/payments/`.
 */
import { serveFacilitatorThread } from './facilitator-serve.js';

await serveFacilitatorThread();
