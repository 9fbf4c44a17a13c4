import { z } from 'zod';
import { ErrorBodySchema } from '../../schemas/errors.js';

type Json = Record<string, unknown>;

/** A JSON Schema (2020-12) of ours as an OpenAPI 3.1 schema object: the dialect is declared once for the document. */
export function schemaObject(schema: Json): Json {
  const { $schema: _dialect, ...rest } = schema;
  return rest;
}

const PAYMENT_REQUIREMENTS = {
  type: 'object',
  description: 'One way to pay (x402 v2): sign it unchanged with an x402 client.',
  properties: {
    scheme: { type: 'string', examples: ['exact'] },
    network: { type: 'string', description: 'CAIP-2 network id, e.g. eip155:8453.' },
    asset: { type: 'string', description: 'Token contract, mint or asset id.' },
    amount: { type: 'string', description: "Price in the asset's smallest units." },
    payTo: { type: 'string' },
    maxTimeoutSeconds: { type: 'integer' },
    extra: { type: 'object' },
  },
  required: ['scheme', 'network', 'asset', 'amount', 'payTo', 'maxTimeoutSeconds'],
};

const PAYMENT_REQUIREMENTS_V1 = {
  type: 'object',
  description: 'One way to pay (x402 v1).',
  properties: {
    scheme: { type: 'string' },
    network: { type: 'string', description: 'Short network name, e.g. base.' },
    maxAmountRequired: { type: 'string' },
    asset: { type: 'string' },
    payTo: { type: 'string' },
    resource: { type: 'string', format: 'uri' },
    description: { type: 'string' },
    mimeType: { type: 'string' },
    outputSchema: {
      type: ['object', 'null'],
      description: 'Discovery data: input (method, query parameters) and output.',
    },
    maxTimeoutSeconds: { type: 'integer' },
    extra: { type: ['object', 'null'] },
  },
  required: ['scheme', 'network', 'maxAmountRequired', 'asset', 'payTo', 'resource', 'maxTimeoutSeconds'],
};

const header = (description: string, schema: Json = { type: 'string' }) => ({ description, schema });
const errorResponse = (description: string, headers?: Json) => ({
  description,
  ...(headers ? { headers } : {}),
  content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
});
const paymentHeader = (name: string, description: string) => ({
  name,
  in: 'header',
  required: false,
  description,
  schema: { type: 'string', contentEncoding: 'base64', contentMediaType: 'application/json' },
});
const retryAfter = { 'Retry-After': { $ref: '#/components/headers/Retry-After' } };

/** x402 v2 PaymentRequired: the 402 body and, base64-encoded, the PAYMENT-REQUIRED header. */
const PAYMENT_REQUIRED = {
  type: 'object',
  description: 'x402 v2 PaymentRequired: the body of a 402 and, base64-encoded, the PAYMENT-REQUIRED header.',
  properties: {
    x402Version: { const: 2 },
    error: { type: 'string', description: '`Payment required`, or why a payment was refused.' },
    message: { type: 'string', description: 'What to do next, when a payment was refused.' },
    resource: {
      type: 'object',
      properties: {
        url: { type: 'string', format: 'uri' },
        description: { type: 'string' },
        mimeType: { type: 'string' },
      },
      required: ['url'],
    },
    accepts: { type: 'array', items: { $ref: '#/components/schemas/PaymentRequirements' }, minItems: 1 },
    extensions: { type: 'object', description: 'bazaar (discovery), payment-identifier, builder-code.' },
  },
  required: ['x402Version', 'accepts'],
};

/** x402 v1 PaymentRequired: the 402 body of a version-1 endpoint. */
const PAYMENT_REQUIRED_V1 = {
  type: 'object',
  description: 'x402 v1 PaymentRequired: the body of a 402 on a version-1 endpoint.',
  properties: {
    x402Version: { const: 1 },
    error: { type: 'string' },
    accepts: { type: 'array', items: PAYMENT_REQUIREMENTS_V1, minItems: 1 },
  },
  required: ['x402Version', 'accepts'],
};

/** The response headers the operations refer to. */
function sharedHeaders(): Json {
  return {
    'PAYMENT-REQUIRED': header('Base64 of the PaymentRequired JSON (x402 v2).', {
      type: 'string',
      contentEncoding: 'base64',
      contentMediaType: 'application/json',
    }),
    'PAYMENT-RESPONSE': header(
      'Base64 of the settlement receipt JSON: success, transaction, network, payer (x402 v2).',
      { type: 'string', contentEncoding: 'base64', contentMediaType: 'application/json' },
    ),
    'X-PAYMENT-RESPONSE': header('Base64 of the settlement receipt JSON (x402 v1).', {
      type: 'string',
      contentEncoding: 'base64',
      contentMediaType: 'application/json',
    }),
    'Retry-After': header('Seconds to wait before retrying.', { type: 'integer', minimum: 1 }),
  };
}

/** The error responses the operations refer to, one per status. */
function sharedResponses(): Json {
  return {
    BadRequest: errorResponse(
      'Invalid input (the error names the field), or a malformed payment; nothing was charged.',
    ),
    Conflict: errorResponse(
      'The payment is paying for a call still running, or its payment id was used for another request.',
    ),
    PayloadTooLarge: errorResponse("The body is larger than this endpoint's limit; nothing was charged."),
    UnsupportedMediaType: errorResponse(
      'The body is in a Content-Encoding (send identity, gzip, deflate or br) or charset (send UTF-8) the server cannot read; nothing was charged.',
    ),
    RateLimited: errorResponse(
      'Too many requests (per client address, per payer or per tool); nothing was charged and a payment sent along stays usable.',
      retryAfter,
    ),
    Internal: errorResponse('The server failed; nothing was charged.'),
    NotImplemented: errorResponse('The tool or its upstream is not available on this server; nothing was charged.'),
    BadGateway: errorResponse('An upstream or the payment facilitator failed; nothing was charged.'),
    Unavailable: errorResponse(
      'settlement_pending: the payment was broadcast (transaction and network in the receipt) and is not confirmed yet; settlement_outcome_unknown: the settlement got no answer and no transaction is known yet. Either way retry with the same payment, never a new one. Otherwise an upstream is throttling.',
      retryAfter,
    ),
    GatewayTimeout: errorResponse('An upstream did not answer in time; nothing was charged.'),
    NotFound: errorResponse('Nothing found for this request.'),
  };
}

/**
 * The shared parts of the document: error body, x402 objects, headers, responses, and the payment request headers as
 * optional parameters (a payment is not a credential: no security scheme, so no discovery tool asks for an API key).
 */
export function openApiComponents(): Json {
  return {
    schemas: {
      Error: schemaObject(z.toJSONSchema(ErrorBodySchema, { io: 'output' }) as Json),
      PaymentRequirements: PAYMENT_REQUIREMENTS,
      PaymentRequired: PAYMENT_REQUIRED,
      PaymentRequiredV1: PAYMENT_REQUIRED_V1,
    },
    headers: sharedHeaders(),
    responses: sharedResponses(),
    parameters: {
      'PAYMENT-SIGNATURE': paymentHeader(
        'PAYMENT-SIGNATURE',
        'x402 v2: base64 of the PaymentPayload signed for one entry of the 402 `accepts`. Omit it to get the price (402 with PAYMENT-REQUIRED).',
      ),
      'X-PAYMENT': paymentHeader(
        'X-PAYMENT',
        'x402 v1: base64 of the v1 payment payload signed for one entry of the 402 `accepts`. Omit it to get the price (402).',
      ),
    },
  };
}
