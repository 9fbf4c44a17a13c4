import { z } from 'zod';
import { ToolError } from '../src/shared/errors.js';
import { assertOrderable } from '../src/smm/quantity.js';
import { defineTool, type ToolContext } from '../src/tool/tool.js';

/** The fixed price of one order in US dollars, paid on the `base` entry (docs/spec-notes.md#prices-and-payment-options). */
const PRICE_USD = '3.00';
/** The same price as a number: what the caller pays and what one order's panel cost may not exceed. */
const CHARGE_USD = Number(PRICE_USD);

const SmmOrderInputSchema = () =>
  z.object({
    link: z
      .string()
      .trim()
      .min(1)
      .max(2048)
      .describe(
        'Target of the order: the URL of the post, profile or channel, or an account handle; 1–2048 characters.',
      ),
    quantity: z
      .number()
      .int()
      .min(1)
      .max(Number.MAX_SAFE_INTEGER)
      .describe(
        'Units to deliver (followers, likes, views, …); integer ≥ 1, within the service’s own minimum and maximum and at most ' +
          `what the $${PRICE_USD} price covers at its rate (GET /v1/smm-quote tells you). Checked before payment.`,
      ),
    serviceId: z
      .number()
      .int()
      .min(1)
      .max(Number.MAX_SAFE_INTEGER)
      .describe('Marketing-panel service identifier (GET /v1/smm-services); integer ≥ 1.'),
  });

const SmmOrderOutputSchema = () =>
  z.object({
    status: z
      .string()
      .describe('Order state; `ordered` once the order is placed (follow it with GET /v1/smm-order/{orderId}).'),
    orderId: z.string().describe('Panel order identifier, for support and status follow-up.'),
    chargeUsd: z.number().describe('What this order cost you, in USD (the fixed price).'),
  });

type Order = z.output<ReturnType<typeof SmmOrderInputSchema>>;

/** Before payment: the service exists and the quantity is orderable (service list cached by the provider). */
async function checkOrder(input: Order, ctx: ToolContext): Promise<void> {
  const service = await ctx.providers.smm.service(input.serviceId, ctx.signal);
  assertOrderable(service, input.quantity, CHARGE_USD);
}

/** After payment: places the order once, records it with its payer and payment, and answers `ordered`. */
async function placeOrder(input: Order, ctx: ToolContext) {
  const payer = ctx.payer;
  if (!payer) throw new ToolError('internal', 'smm-order ran without a verified payment.');
  await checkOrder(input, ctx);
  const orderId = await ctx.providers.smm.addOrder(input, ctx.signal);
  const now = new Date().toISOString();
  const record = {
    orderId,
    ...input,
    chargeUsd: CHARGE_USD,
    status: 'ordered',
    payer: payer.payer,
    replayKey: payer.replayKey,
    createdAt: now,
    updatedAt: now,
  };
  try {
    await ctx.store.saveOrder(record);
  } catch (err) {
    // The order exists at the panel and is paid for; losing our copy must not turn it into a free order.
    ctx.log.error('order placed but not stored', {
      orderId,
      serviceId: input.serviceId,
      quantity: input.quantity,
      error: String((err as Error)?.message ?? err),
    });
  }
  return { status: 'ordered', orderId, chargeUsd: CHARGE_USD };
}

/** Places a paid social-marketing order (followers, likes, views, …) for a link with a marketing panel. */
export const smmOrder = defineTool({
  name: 'smm-order',
  title: 'Social marketing order',
  description:
    'Places a social-media marketing order with a marketing panel: `serviceId` chooses the service (e.g. ' +
    'followers, likes or views on a platform; search with the free smm-services), `link` the post or account, ' +
    '`quantity` the units to deliver (checked against the service limits before payment; the free smm-quote shows ' +
    'them). Returns the order status (`ordered`), order id and the charge in USD; follow the order with the free ' +
    'smm-order-status. Each call places a new order (not idempotent: retrying orders again). A refused or failed ' +
    'order is not charged; the price is fixed, whatever the quantity.',
  group: 'smm',
  method: 'POST',
  path: '/smm/v1/smm-order',
  input: SmmOrderInputSchema,
  output: SmmOrderOutputSchema,
  pricing: { usd: PRICE_USD, accepts: 'base-short-name' },
  annotations: { readOnlyHint: false, idempotentHint: false, openWorldHint: true, destructiveHint: false },
  example: { link: 'https://www.instagram.com/p/C0ffee/', quantity: 100, serviceId: 1 },
  needs: (_input, providers) => providers.smm.unconfigured,
  precheck: checkOrder,
  handler: placeOrder,
});
