import { describe, expect, it } from 'vitest';
import { ToolError } from '../../src/shared/errors.js';
import type { SmmService } from '../../src/providers/smm/panel.js';
import { assertOrderable, maxOrderQuantity, panelCost, quantityProblem } from '../../src/smm/quantity.js';

const followers: SmmService = {
  serviceId: 1,
  name: 'Followers',
  type: 'Default',
  category: 'Instagram Followers',
  ratePer1000: 0.9,
  min: 50,
  max: 10000,
  refill: true,
  cancel: true,
};
const premium: SmmService = { ...followers, serviceId: 4, name: 'Premium', ratePer1000: 45, min: 100, max: 5000 };
const views: SmmService = { ...followers, serviceId: 3, name: 'Views', ratePer1000: 0.02, min: 100, max: 1_000_000 };

describe('smm order rules', () => {
  it('prices a quantity at the rate per 1000', () => {
    expect(panelCost(followers, 1000)).toBe(0.9);
    expect(panelCost(followers, 333)).toBe(0.2997);
  });

  it('caps one order at what the price covers, or the service maximum when that is lower', () => {
    expect(maxOrderQuantity(followers, 3)).toBe(3333);
    expect(maxOrderQuantity(views, 3)).toBe(150_000);
    expect(maxOrderQuantity({ ...followers, ratePer1000: 0.15 }, 3)).toBe(10000);
    expect(maxOrderQuantity({ ...followers, ratePer1000: 1.5 }, 3)).toBe(2000);
    expect(maxOrderQuantity({ ...followers, ratePer1000: 0 }, 3)).toBe(10000);
  });

  it('explains a quantity below the minimum, above the maximum, or beyond the price', () => {
    expect(quantityProblem(followers, 50, 3)).toBeUndefined();
    expect(quantityProblem(followers, 3333, 3)).toBeUndefined();
    expect(quantityProblem(followers, 49, 3)).toMatch(/below the minimum of 50 .* order 50 to 3333/);
    expect(quantityProblem(followers, 3334, 3)).toMatch(
      /above 3333, the most the \$3\.00 order price covers at \$0\.9 per 1000/,
    );
    expect(quantityProblem({ ...followers, ratePer1000: 0.15 }, 10001, 3)).toMatch(
      /above 10000, the maximum of service 1/,
    );
    expect(quantityProblem(premium, 100, 3)).toMatch(/needs at least 100 units .* choose a cheaper service/);
  });

  it('refuses with invalid_input naming quantity, or serviceId when no quantity of it can be ordered', () => {
    const refused = (s: SmmService, q: number) => {
      try {
        assertOrderable(s, q, 3);
      } catch (err) {
        return err as ToolError;
      }
      return undefined;
    };
    expect(refused(followers, 100)).toBeUndefined();
    expect(refused(followers, 10)).toMatchObject({
      code: 'invalid_input',
      field: 'quantity',
      details: { min: 50, max: 3333, serviceMax: 10000 },
    });
    expect(refused(premium, 100)).toMatchObject({ code: 'invalid_input', field: 'serviceId' });
    expect(refused(followers, 10)!.message).toMatch(/^Invalid input: quantity: /);
  });
});
