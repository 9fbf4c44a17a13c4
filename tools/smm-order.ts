import { z } from 'zod';
import { NOT_YET_AVAILABLE_NOTE, notYetAvailable } from '../src/not-yet-available.js';
import { defineTool } from '../src/tool.js';

const SmmOrderInputSchema = z.object({
  link: z
    .string()
    .trim()
    .min(1)
    .max(2048)
    .describe('Target of the order: the URL of the post, profile or channel, or an account handle; 1–2048 characters.'),
  quantity: z
    .number()
    .int()
    .min(1)
    .max(Number.MAX_SAFE_INTEGER)
    .describe('Units to deliver (followers, likes, views, …); integer ≥ 1. Each service also has its own minimum and maximum.'),
  serviceId: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).describe('Marketing-panel service identifier; integer ≥ 1.'),
});

const SmmOrderOutputSchema = z.object({
  status: z.string().describe('Order state; `ordered` once the order is placed.'),
  orderId: z.string().describe('Panel order identifier, for support and status follow-up.'),
  chargeUsd: z.number().describe('What the panel charged for the order, in USD.'),
});

/** Places a paid social-marketing order (followers, likes, views, …) for a link with a marketing panel. */
export const smmOrder = defineTool({
  name: 'smm-order',
  title: 'Social marketing order',
  description:
    'Places a social-media marketing order with a marketing panel: `serviceId` chooses the service (e.g. ' +
    'followers, likes or views on a platform), `link` the post or account, `quantity` the units to deliver. ' +
    'Returns the order status (`ordered`), order id and the panel charge in USD. Each call places a new order ' +
    '(not idempotent: retrying orders again). Costs a fixed 3000000 USDC units ($3.00) per call, on Base only.' + NOT_YET_AVAILABLE_NOTE,
  group: 'smm',
  method: 'POST',
  path: '/smm/v1/smm-order',
  input: SmmOrderInputSchema,
  output: SmmOrderOutputSchema,
  price: { default: '3000000' },
  annotations: { readOnlyHint: false, idempotentHint: false, openWorldHint: true, destructiveHint: false },
  handler: notYetAvailable('smm-order'),
});
