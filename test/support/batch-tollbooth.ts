/**
 * Tollbooth selling test tools with batch settlement on, on a fresh local Base chain with the escrow installed, before
 * the official facilitator (with the batch-settlement scheme) served over HTTP: what a remote facilitator is to it.
 */
import type { AnyToolDefinition } from '../../src/tool/tool.js';
import { startBatchSettlementEnvironment, type BatchSettlementEnvironment } from './chain/batch-settlement.js';
import { startBatchParties } from './chain/batch-settlement-parties.js';
import { serveFacilitator, type HttpFacilitator } from './http-facilitator.js';
import { startTestServer, type TestServer } from './server.js';

/** The running parts; the test stops them (some tests stop the server and facilitator themselves first). */
export interface BatchTollbooth {
  env: BatchSettlementEnvironment;
  facilitator: HttpFacilitator;
  server: TestServer;
}

/**
 * Starts the chain with `payers` funded payers, the facilitator selling at `price`, and the server with `tools`,
 * `MPP=off`, `BATCH_SETTLEMENT=on`, the receiver-authorizer `authorizerKey` and `env` on top.
 */
export async function startBatchTollbooth(options: {
  payers: number;
  price: bigint;
  tools: readonly AnyToolDefinition[];
  authorizerKey: string;
  env?: Record<string, string>;
}): Promise<BatchTollbooth> {
  const env = await startBatchSettlementEnvironment(options.payers);
  const facilitator = await serveFacilitator((await startBatchParties(env, options.price)).facilitator);
  const { FACILITATOR_EVM_PRIVATE_KEY: _inProcess, ...rest } = env.env;
  const server = await startTestServer(
    {
      ...rest,
      FACILITATOR_URL: facilitator.url,
      MPP: 'off',
      BATCH_SETTLEMENT: 'on',
      BATCH_RECEIVER_AUTHORIZER_KEY: options.authorizerKey,
      ...options.env,
    },
    { tools: options.tools },
  );
  return { env, facilitator, server };
}
