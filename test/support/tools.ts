import { z } from 'zod';
import { ToolError } from '../../src/shared/errors.js';
import { defineTool, type Accepts } from '../../src/tool/tool.js';

/** A paid test tool whose handler always fails, to prove that failed calls are never settled. */
export const failingTool = defineTool({
  name: 'always-fails',
  title: 'Always fails',
  description: 'Test tool: fails after payment verification.',
  group: 'tools',
  method: 'POST',
  path: '/api/test/always-fails',
  input: z.object({ note: z.string().optional().describe('Ignored.') }),
  output: z.object({ ok: z.boolean() }),
  pricing: { usd: '0.001', accepts: 'every-network' },
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  handler: () => {
    throw new ToolError('upstream_unavailable', 'The test upstream is down.');
  },
});

/**
 * A paid test tool that runs a side effect (e.g. draining the payer, or counting its runs) before answering, priced
 * under `accepts` (every network unless given).
 */
export function sideEffectTool(name: string, effect: () => Promise<void>, accepts: Accepts = 'every-network') {
  return defineTool({
    name,
    title: name,
    description: 'Test tool with a side effect.',
    group: 'tools',
    method: 'POST',
    path: `/api/test/${name}`,
    input: z.object({}),
    output: z.object({ secret: z.string() }),
    pricing: { usd: '0.001', accepts },
    annotations: { readOnlyHint: false, idempotentHint: false, openWorldHint: false },
    handler: async () => {
      await effect();
      return { secret: 'output that must be withheld when settlement fails' };
    },
  });
}

/** A paid test tool whose endpoint is not configured on this server: refused with not_implemented. */
export const notBuiltTool = defineTool({
  name: 'not-built',
  title: 'Not built',
  description: 'Test tool: refused with not_implemented after payment verification.',
  group: 'tools',
  method: 'POST',
  path: '/api/test/not-built',
  input: z.object({ coin: z.string().describe('Ignored.') }),
  output: z.object({ ok: z.boolean() }),
  pricing: { usd: '0.001', accepts: 'every-network' },
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  handler: () => {
    throw new ToolError('not_implemented', 'not-built is not available on this server.');
  },
});

/** A paid x402 version-1 tool (group `transfers`) that answers, so a version-1 payment reaches settlement. */
export const v1Echo = defineTool({
  name: 'v1-echo',
  title: 'v1 echo',
  description: 'Test tool paid with x402 version 1.',
  group: 'transfers',
  method: 'GET',
  path: '/api/test/v1-echo',
  input: z.object({ note: z.string().optional() }),
  output: z.object({ note: z.string() }),
  pricing: { usd: '0.001', accepts: 'base-v1' },
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  handler: ({ note }) => ({ note: note ?? '' }),
});
