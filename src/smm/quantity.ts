import { ToolError } from '../shared/errors.js';
import type { SmmService } from '../providers/smm/panel.js';

/**
 * The order rules of smm-order and its quote: a quantity must lie within the service's own minimum and maximum, and
 * the panel's cost for it (rate per 1,000 units) must be covered by the fixed price the caller pays, so one order
 * can never cost the operator more than it earns.
 */

/** The panel's cost of `quantity` units of a service, in the panel currency, rounded to 6 decimals. */
export function panelCost(service: SmmService, quantity: number): number {
  return Math.round(((service.ratePer1000 * quantity) / 1000) * 1e6) / 1e6;
}

/** The most units one order may ask for: the service maximum, lowered to what `chargeUsd` covers at its rate. */
export function maxOrderQuantity(service: SmmService, chargeUsd: number): number {
  if (service.ratePer1000 <= 0) return service.max;
  const covered = Math.floor((chargeUsd * 1000) / service.ratePer1000 + 1e-9);
  return Math.min(service.max, covered);
}

/** Why `quantity` cannot be ordered from `service` for `chargeUsd`, as a sentence; undefined when it can. */
export function quantityProblem(service: SmmService, quantity: number, chargeUsd: number): string | undefined {
  const max = maxOrderQuantity(service, chargeUsd);
  const name = `service ${service.serviceId} (${service.name})`;
  if (max < service.min) {
    return `${name} needs at least ${service.min} units at $${service.ratePer1000} per 1000, more than the $${chargeUsd.toFixed(2)} order price covers; choose a cheaper service`;
  }
  if (quantity < service.min)
    return `quantity ${quantity} is below the minimum of ${service.min} for ${name}; order ${service.min} to ${max}`;
  if (quantity > max) {
    const why =
      max < service.max
        ? `the most the $${chargeUsd.toFixed(2)} order price covers at $${service.ratePer1000} per 1000`
        : `the maximum of ${name}`;
    return `quantity ${quantity} is above ${max}, ${why}; order ${service.min} to ${max}`;
  }
  return undefined;
}

/** Throws invalid_input naming `quantity` (or `serviceId` when no quantity can be ordered) unless the order is allowed. */
export function assertOrderable(service: SmmService, quantity: number, chargeUsd: number): void {
  const problem = quantityProblem(service, quantity, chargeUsd);
  if (problem === undefined) return;
  const field = maxOrderQuantity(service, chargeUsd) < service.min ? 'serviceId' : 'quantity';
  throw new ToolError('invalid_input', `Invalid input: ${field}: ${problem}.`, {
    field,
    details: {
      min: service.min,
      max: maxOrderQuantity(service, chargeUsd),
      serviceMax: service.max,
      ratePer1000: service.ratePer1000,
    },
  });
}
