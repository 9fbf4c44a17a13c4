/**
 * The schemas of the panel's answers. Panels type fields loosely (numbers as strings and vice versa), so numbers are
 * read leniently, and a service list entry the panel garbled is left out rather than failing the whole list.
 */
import { z } from 'zod';

/** Integer as number or digit string. */
const int = z
  .union([z.number(), z.string().trim().regex(/^\d+$/, 'must be an integer')])
  .transform(Number)
  .pipe(z.number().int().nonnegative());
/** Non-negative decimal as number or string. */
const decimal = z
  .union([
    z.number(),
    z
      .string()
      .trim()
      .regex(/^\d+(\.\d+)?$/, 'must be a decimal number'),
  ])
  .transform(Number)
  .pipe(z.number().nonnegative().finite());
const optionalDecimal = z
  .union([z.number(), z.string(), z.null()])
  .optional()
  .transform((v) => {
    if (v === null || v === undefined || (typeof v === 'string' && v.trim() === '')) return null;
    const n = Number(v);
    return Number.isFinite(n) ? n : null;
  });
const yes = z
  .union([z.boolean(), z.number(), z.string(), z.null()])
  .optional()
  .transform(
    (v) => v === true || v === 1 || (typeof v === 'string' && ['1', 'true', 'yes'].includes(v.trim().toLowerCase())),
  );

const ServiceSchema = z.object({
  service: int.pipe(z.number().min(1)),
  name: z.string(),
  type: z.string().nullish(),
  category: z.string().nullish(),
  rate: decimal,
  // Limits as the panel types them, "10.00" included; a fractional minimum rounds up and a maximum down.
  min: decimal.transform(Math.ceil),
  max: decimal.transform(Math.floor),
  refill: yes,
  cancel: yes,
});

/** The answer to `action=services`: a list whose entries are read one by one with {@link readServiceList}. */
export const ServicesAnswerSchema = z.array(z.unknown());

/** The answer to `action=add`: the panel's order id (a number or a short token), as a string. */
export const AddAnswerSchema = z.object({
  order: z
    .union([
      z.number().int().nonnegative(),
      z
        .string()
        .trim()
        .regex(/^[A-Za-z0-9_-]{1,64}$/),
    ])
    .transform(String),
});

/** The answer to `action=status`: the panel's status word and its optional numbers. */
export const StatusAnswerSchema = z.object({
  status: z.string().min(1),
  charge: optionalDecimal,
  start_count: optionalDecimal,
  remains: optionalDecimal,
  currency: z.string().nullish(),
});

/** The answer to `action=balance`: the account balance and the currency the panel bills (and prices) in. */
export const BalanceAnswerSchema = z.object({
  currency: z.string().trim().nullish(),
});

/** One service the panel sells. */
export interface SmmService {
  serviceId: number;
  name: string;
  type: string;
  category: string;
  /** Price per 1,000 units in USD (the provider refuses a panel that bills in another currency). */
  ratePer1000: number;
  min: number;
  max: number;
  refill: boolean;
  cancel: boolean;
}

/** The services of a service list that can be read, and how many entries could not. */
export function readServiceList(entries: readonly unknown[]): { list: SmmService[]; garbled: number } {
  const list: SmmService[] = [];
  let garbled = 0;
  for (const raw of entries) {
    const parsed = ServiceSchema.safeParse(raw);
    if (!parsed.success) {
      garbled += 1;
      continue;
    }
    const s = parsed.data;
    list.push({
      serviceId: s.service,
      name: s.name.trim(),
      type: s.type?.trim() || 'Default',
      category: s.category?.trim() ?? '',
      ratePer1000: s.rate,
      min: s.min,
      max: s.max,
      refill: s.refill,
      cancel: s.cancel,
    });
  }
  return { list, garbled };
}
