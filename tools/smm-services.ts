import { z } from 'zod';
import type { SmmService } from '../src/providers/smm/panel.js';
import { maxOrderQuantity } from '../src/smm/quantity.js';
import { defineTool, type ToolContext } from '../src/tool/tool.js';
import { smmOrder } from './smm-order.js';

const Text = () => z.string().trim().min(1).max(64);

const SmmServicesInputSchema = () =>
  z.object({
    q: Text()
      .optional()
      .describe(
        'Words that must all appear in the service name, category or type (any case), e.g. `instagram followers`.',
      ),
    category: Text().optional().describe('Part of the category name (any case), e.g. `Instagram Likes`.'),
    platform: Text()
      .optional()
      .describe('Platform word matched in the category or name (any case), e.g. `tiktok`, `youtube`, `telegram`.'),
    limit: z.coerce.number().int().min(1).max(100).default(20).describe('Most services to return, 1–100; default 20.'),
  });

const ServiceSchema = () =>
  z.object({
    serviceId: z.number().int().describe('Identifier to pass to smm-quote and smm-order.'),
    name: z.string(),
    category: z.string(),
    type: z.string(),
    ratePer1000: z.number().describe('Panel price per 1,000 units, in USD.'),
    min: z.number().int().describe('Smallest quantity.'),
    max: z
      .number()
      .int()
      .describe(
        'Largest quantity one smm-order may ask for (service maximum, lowered to what the fixed price covers).',
      ),
    refill: z.boolean().describe('The panel refills drops.'),
    cancel: z.boolean().describe('The panel can cancel the order.'),
  });

const SmmServicesOutputSchema = () =>
  z.object({
    total: z.number().int().describe('Services matching the filters, before `limit`.'),
    count: z.number().int().describe('Entries in `services`.'),
    chargeUsd: z.number().describe('What one smm-order costs, whatever the service.'),
    services: z.array(ServiceSchema()).describe('Matching services in the panel’s order.'),
    fetchedAt: z
      .string()
      .describe('When the service list was fetched from the panel (ISO-8601; it is cached for 10 minutes).'),
  });

function matches(s: SmmService, input: z.output<ReturnType<typeof SmmServicesInputSchema>>): boolean {
  const haystack = `${s.name} ${s.category} ${s.type}`.toLowerCase();
  if (
    input.q &&
    !input.q
      .toLowerCase()
      .split(/\s+/)
      .every((word) => haystack.includes(word))
  )
    return false;
  if (input.category && !s.category.toLowerCase().includes(input.category.toLowerCase())) return false;
  if (input.platform && !`${s.category} ${s.name}`.toLowerCase().includes(input.platform.toLowerCase())) return false;
  return true;
}

/** Filters the cached service list; services no order could buy at the fixed price are left out. */
async function search(input: z.output<ReturnType<typeof SmmServicesInputSchema>>, ctx: ToolContext) {
  const chargeUsd = Number(smmOrder.pricing.usd);
  const fetched = await ctx.providers.smm.services(ctx.signal);
  const found = fetched.data
    .filter((s) => maxOrderQuantity(s, chargeUsd) >= s.min && matches(s, input))
    .map((s) => ({ ...s, max: maxOrderQuantity(s, chargeUsd) }));
  const services = found.slice(0, input.limit);
  return { total: found.length, count: services.length, chargeUsd, services, fetchedAt: fetched.fetchedAt };
}

/** Free search of the marketing panel's services by text, category and platform. */
export const smmServices = defineTool({
  name: 'smm-services',
  title: 'Social marketing services',
  description:
    'Searches the social-marketing services smm-order can buy. Optional `q` (words that must all ' +
    'appear), `category` (part of the category), `platform` (e.g. instagram, tiktok, youtube) and `limit` (1–100, ' +
    'default 20). Returns each service’s id, name, category, type, rate per 1,000 units, the smallest and largest ' +
    `orderable quantity and refill/cancel support. Services the fixed $${smmOrder.pricing.usd} order price cannot cover are left out.`,
  group: 'smm',
  method: 'GET',
  path: '/v1/smm-services',
  input: SmmServicesInputSchema,
  output: SmmServicesOutputSchema,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: true },
  handler: search,
});
