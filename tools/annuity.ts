import { z } from 'zod';
import { annuityValues } from '../src/finance/annuity.js';
import { ToolError } from '../src/shared/errors.js';
import { defineTool } from '../src/tool/tool.js';

const AnnuityInputSchema = () =>
  z.object({
    payment: z.number().finite().describe('Payment per period, in any currency unit.'),
    ratePerPeriod: z
      .number()
      .finite()
      .gt(-1)
      .describe('Interest rate per period as a decimal, e.g. 0.01 for 1% per period. 0 is allowed.'),
    periods: z.number().int().positive().max(100_000).describe('Number of periods; a positive integer.'),
    type: z
      .enum(['ordinary', 'due'])
      .default('ordinary')
      .describe('`ordinary` (payments at period end, default) or `due` (payments at period start).'),
  });

const AnnuityOutputSchema = () =>
  z.object({
    presentValue: z.number().describe('Present value of the payment stream.'),
    futureValue: z.number().describe('Future value of the payment stream at the end of the last period.'),
    type: z.enum(['ordinary', 'due']).describe('The annuity type used.'),
  });

/** Present and future value of an ordinary annuity or an annuity due. */
export const annuity = defineTool({
  name: 'annuity',
  title: 'Annuity present and future value',
  description:
    'Computes the present value and the future value (at the end of the last period) of a level stream of ' +
    '`periods` payments of `payment` at `ratePerPeriod` compounded once per period, in closed form: ' +
    'PV = payment × (1 − (1+r)^−n) / r and FV = payment × ((1+r)^n − 1) / r; with a zero rate both equal ' +
    'payment × periods. `type` "ordinary" (default) assumes payments at the end of each period; "due" assumes ' +
    'payments at the start, which multiplies both values by (1+r). Values are returned unrounded, in the ' +
    'currency unit of `payment`. A 400 invalid_input error is returned if a result overflows to a non-finite ' +
    'number. Deterministic, no external calls.',
  group: 'tools',
  method: 'POST',
  path: '/api/annuity',
  input: AnnuityInputSchema,
  output: AnnuityOutputSchema,
  pricing: { usd: '0.001', accepts: 'every-network' },
  example: { payment: 100, ratePerPeriod: 0.05, periods: 10, type: 'ordinary' },
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  handler: ({ payment, ratePerPeriod, periods, type }) => {
    const values = annuityValues(payment, ratePerPeriod, periods, type === 'due');
    if (!values) {
      throw new ToolError(
        'invalid_input',
        'The annuity value is too large to represent as a finite number; reduce periods, ratePerPeriod or payment.',
      );
    }
    const { presentValue, futureValue } = values;
    return { presentValue, futureValue, type };
  },
});
