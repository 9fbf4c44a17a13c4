import { z } from 'zod';
import { ToolError } from '../src/shared/errors.js';
import { ORDER_STATUSES } from '../src/providers/smm/panel.js';
import { defineTool, type ToolContext } from '../src/tool/tool.js';

const SmmOrderStatusInputSchema = () =>
  z.object({
    orderId: z
      .string()
      .trim()
      .regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be an order id as smm-order returned it (letters, digits, "-" and "_")')
      .describe('The `orderId` smm-order returned (in the path over HTTP: /v1/smm-order/{orderId}).'),
  });

const SmmOrderStatusOutputSchema = () =>
  z.object({
    orderId: z.string(),
    status: z
      .enum(ORDER_STATUSES)
      .describe(
        '`pending`, `in_progress`, `completed`, `partial` (delivered in part, rest refunded by the panel), `canceled`, or `unknown` for a panel word we do not know.',
      ),
    panelStatus: z.string().describe('The panel’s own status word, e.g. `In progress`.'),
    remains: z.number().nullable().describe('Units still to deliver, when the panel says.'),
    startCount: z
      .number()
      .nullable()
      .describe('The counter (followers, views, …) when delivery started, when the panel says.'),
    serviceId: z.number().int(),
    quantity: z.number().int(),
    chargeUsd: z.number().describe('What the order cost its payer, in USD.'),
    orderedAt: z.string().describe('When the order was placed (ISO-8601).'),
    updatedAt: z.string().describe('When its status was last read from the panel (ISO-8601).'),
  });

/** Looks the order up in our store (only orders placed here are answered), then asks the panel for its state. */
async function status(input: z.output<ReturnType<typeof SmmOrderStatusInputSchema>>, ctx: ToolContext) {
  const stored = await ctx.store.getOrder(input.orderId);
  if (!stored) {
    throw new ToolError(
      'not_found',
      `No order ${input.orderId} was placed through this server. Use the orderId smm-order returned.`,
      { field: 'orderId' },
    );
  }
  const { data } = await ctx.providers.smm.orderStatus(stored.orderId, ctx.signal);
  let updatedAt = stored.updatedAt;
  if (data.status !== stored.status) {
    updatedAt = new Date().toISOString();
    await ctx.store.saveOrder({ ...stored, status: data.status, updatedAt });
  }
  return {
    orderId: stored.orderId,
    status: data.status,
    panelStatus: data.panelStatus,
    remains: data.remains,
    startCount: data.startCount,
    serviceId: stored.serviceId,
    quantity: stored.quantity,
    chargeUsd: stored.chargeUsd,
    orderedAt: stored.createdAt,
    updatedAt,
  };
}

/** Free status of a social-marketing order placed with smm-order. */
export const smmOrderStatus = defineTool({
  name: 'smm-order-status',
  title: 'Social marketing order status',
  description:
    'The current state of an order placed with smm-order, by `orderId`: status (pending, ' +
    'in_progress, completed, partial, canceled), the panel’s own status word, units remaining and the start count, ' +
    'with the service, quantity, charge and order time recorded when it was placed. Only orders placed through this ' +
    'server are answered; others are not found.',
  group: 'smm',
  method: 'GET',
  path: '/v1/smm-order/:orderId',
  input: SmmOrderStatusInputSchema,
  output: SmmOrderStatusOutputSchema,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: true },
  handler: status,
});
