/**
 * The panel's `{"error": "…"}` answers mapped to the errors callers see (the panel's common texts:
 * docs/spec-notes.md#social-marketing-panel-api-v2). Panels send them usually with HTTP 200, so the answer is read
 * before its schema is checked.
 */
import { ToolError } from '../../shared/errors.js';
import type { Logger } from '../../shared/log.js';

/** What the refused request named, for the message. */
export interface ErrorContext {
  serviceId?: number;
  quantity?: number;
  orderId?: string;
}

/** A refusal that is the operator's problem (bad key, empty account), logged for them; undefined for any other text. */
function accountError(lower: string, label: string, log: Logger): ToolError | undefined {
  if (/api[ _-]?key|invalid key|key is (invalid|wrong)|unauthori[sz]ed/.test(lower)) {
    log.error('the marketing panel refused our API key; check SMM_PANEL_KEY', { upstream: 'smm' });
    return new ToolError(
      'upstream_unavailable',
      `The ${label} refused this server's credentials (an operator problem). Try again later.`,
    );
  }
  if (/not enough funds|insufficient (funds|balance)|low balance|balance is (too )?low/.test(lower)) {
    log.error('the marketing panel account is out of funds; top it up', { upstream: 'smm' });
    return new ToolError(
      'upstream_unavailable',
      `The ${label} account of this server is out of funds (an operator problem). Try again later.`,
    );
  }
  return undefined;
}

/** A refused quantity, naming the panel's minimum or maximum when its text gives one. */
function quantityError(said: string, lower: string, label: string, at: ErrorContext): ToolError {
  const min = /less than minimal\s*(\d+)/.exec(lower)?.[1];
  const max = /more than maximal\s*(\d+)/.exec(lower)?.[1];
  const bound = min ? ` (the minimum is ${min})` : max ? ` (the maximum is ${max})` : '';
  return new ToolError(
    'invalid_input',
    `The ${label} refused quantity ${at.quantity ?? ''}${bound}. Check the limits with GET /v1/smm-quote.`,
    {
      field: 'quantity',
      ...(min || max
        ? { details: { ...(min ? { min: Number(min) } : {}), ...(max ? { max: Number(max) } : {}) } }
        : {}),
    },
  );
}

/** A refusal of what the caller sent (quantity, duplicate order, service, order id, link); undefined for any other text. */
function requestError(said: string, lower: string, label: string, at: ErrorContext): ToolError | undefined {
  if (lower.includes('quantity')) return quantityError(said, lower, label, at);
  if (
    /active order|already (has|have) an? (active )?order|order (is )?already (active|running|in progress)|duplicate/.test(
      lower,
    )
  ) {
    return new ToolError(
      'conflict',
      `The ${label} already has an active order for this link. Wait until it completes, or use another link.`,
      { field: 'link' },
    );
  }
  if (lower.includes('service')) {
    return new ToolError(
      'invalid_input',
      `The ${label} does not sell service ${at.serviceId ?? ''}. Find one with GET /v1/smm-services.`,
      { field: 'serviceId' },
    );
  }
  if (lower.includes('order id') || lower.includes('order not found')) {
    return new ToolError('not_found', `The ${label} does not know order ${at.orderId ?? ''}.`, {
      field: 'orderId',
    });
  }
  if (/\blink\b|\burl\b/.test(lower)) {
    return new ToolError('invalid_input', `The ${label} refused the link. Send the full URL of the post or profile.`, {
      field: 'link',
    });
  }
  return undefined;
}

/** Maps a panel's `{"error": "…"}` text to the error the caller sees (the panel's common texts: docs/spec-notes.md#social-marketing-panel-api-v2). */
export function panelError(text: string, label: string, at: ErrorContext, log: Logger): ToolError {
  const said = text.trim().slice(0, 200);
  const lower = said.toLowerCase();
  const known = accountError(lower, label, log) ?? requestError(said, lower, label, at);
  // The panel's own text is logged, never quoted to the caller (it may echo a key or internals).
  if (known) {
    log.warn('the marketing panel refused a request', { upstream: 'smm', code: known.code, error: said });
    return known;
  }
  log.error('the marketing panel refused a request', { upstream: 'smm', error: said });
  return new ToolError('upstream_unavailable', `The ${label} refused the request. Try again later.`);
}

/** Reads the `error` text of a panel answer sent with a non-5xx status (5xx and 429 keep their retry handling). */
export function interpretPanel(label: string, at: ErrorContext, log: Logger) {
  return (status: number, json: unknown): ToolError | undefined => {
    if (status >= 500 || typeof json !== 'object' || json === null || Array.isArray(json)) return undefined;
    const error = (json as { error?: unknown }).error;
    if (error === undefined || error === null || error === '') return undefined;
    return panelError(typeof error === 'string' ? error : JSON.stringify(error), label, at, log);
  };
}
