import { z } from 'zod';
import { maxOrderQuantity, panelCost, quantityProblem } from '../src/smm/quantity.js';
import { defineTool, type ToolContext } from '../src/tool/tool.js';
import { smmOrder } from './smm-order.js';

/** Query-string integer (GET parameters arrive as text). */
const queryInt = (what: string) =>
  z.coerce
    .number()
    .int()
    .min(1)
    .max(Number.MAX_SAFE_INTEGER)
    .describe(`${what}; integer ≥ 1 (query-string text such as "100" is read as a number).`);

const SmmQuoteInputSchema = () =>
  z.object({
    serviceId: queryInt('Marketing-panel service identifier (find one with smm-services)'),
    quantity: queryInt('Units you would order'),
  });

const SmmQuoteOutputSchema = () =>
  z.object({
    serviceId: z.number().int(),
    name: z.string().describe('Service name at the panel.'),
    category: z.string().describe('Service category, usually the platform and what is delivered.'),
    type: z.string().describe('Panel service type, e.g. `Default`.'),
    quantity: z.number().int().describe('The quantity quoted.'),
    ratePer1000: z.number().describe('Panel price per 1,000 units, in USD.'),
    panelCostUsd: z.number().describe('What the panel charges for this quantity (rate × quantity ÷ 1000), in USD.'),
    chargeUsd: z.number().describe('What smm-order charges you for one order: the fixed price, whatever the quantity.'),
    min: z.number().int().describe('Smallest quantity of this service.'),
    max: z
      .number()
      .int()
      .describe('Largest quantity one order may ask for: the service maximum, lowered to what the fixed price covers.'),
    serviceMax: z.number().int().describe('The service’s own maximum at the panel.'),
    orderable: z.boolean().describe('Whether smm-order would accept this service and quantity.'),
    problem: z
      .string()
      .nullable()
      .describe('Why it would be refused (quantity out of range, price not covered); null when orderable.'),
  });

/** Quotes one order from the cached service list: panel cost, our charge, limits, and whether it can be ordered. */
async function quote(input: z.output<ReturnType<typeof SmmQuoteInputSchema>>, ctx: ToolContext) {
  const chargeUsd = Number(smmOrder.pricing.usd);
  const service = await ctx.providers.smm.service(input.serviceId, ctx.signal);
  const problem = quantityProblem(service, input.quantity, chargeUsd);
  return {
    serviceId: service.serviceId,
    name: service.name,
    category: service.category,
    type: service.type,
    quantity: input.quantity,
    ratePer1000: service.ratePer1000,
    panelCostUsd: panelCost(service, input.quantity),
    chargeUsd,
    min: service.min,
    max: maxOrderQuantity(service, chargeUsd),
    serviceMax: service.max,
    orderable: problem === undefined,
    problem: problem ?? null,
  };
}

/** Free quote for a social-marketing order: price, limits and whether smm-order would accept it. */
export const smmQuote = defineTool({
  name: 'smm-quote',
  title: 'Social marketing order quote',
  description:
    'Quotes a social-marketing order before you pay for it. Give `serviceId` and `quantity`; ' +
    'returns the service name and category, the panel rate per 1,000 units, the panel cost of the quantity, the ' +
    `fixed price smm-order charges ($${smmOrder.pricing.usd}), the smallest and largest orderable quantity, and whether smm-order would ` +
    'accept it (`orderable`, with the reason when not). An unknown service is refused naming serviceId.',
  group: 'smm',
  method: 'GET',
  path: '/v1/smm-quote',
  input: SmmQuoteInputSchema,
  output: SmmQuoteOutputSchema,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: true },
  handler: quote,
});
