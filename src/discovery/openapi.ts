import { inputJsonSchema, outputJsonSchema } from '../tool/tool-schema.js';
import type { AnyToolDefinition } from '../tool/tool.js';
import { usdString, type DiscoveryCatalog, type FreeEntry, type PaidEntry } from './catalog.js';
import type { PriceSummary } from '../payments/challenges/pricing.js';
import { openApiComponents, schemaObject } from './openapi-components.js';
import {
  MPP_DESCRIPTION,
  MPP_RESPONSE_HEADERS,
  mppHeaderComponents,
  mppPaymentInfo,
  mppServiceInfo,
} from './openapi-mpp.js';

type Json = Record<string, unknown>;

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const response = (name: string) => ({ $ref: `#/components/responses/${name}` });

/** `/v1/smm-order/:orderId` (express) → `/v1/smm-order/{orderId}` (OpenAPI), and the parameter names. */
export function openApiPath(path: string): { path: string; params: string[] } {
  const params = [...path.matchAll(/:(\w+)/g)].map((m) => m[1]!);
  return { path: path.replace(/:(\w+)/g, '{$1}'), params };
}

/** Query or path parameters from the properties of an input schema (each property's schema kept as is). */
function parameters(
  schema: Json,
  where: 'query' | 'path',
  names: readonly string[] | undefined,
  example: Json | undefined,
): Json[] {
  const properties = (schema.properties ?? {}) as Record<string, Json>;
  const required = new Set((schema.required ?? []) as string[]);
  return Object.entries(properties)
    .filter(([name]) => (names ? names.includes(name) : true))
    .map(([name, property]) => ({
      name,
      in: where,
      required: where === 'path' || required.has(name),
      ...(typeof property.description === 'string' ? { description: property.description } : {}),
      schema: property,
      ...(example && example[name] !== undefined ? { example: example[name] } : {}),
    }));
}

/** The schema without the named properties (what remains for the query string or the body once path parameters are taken). */
function without(schema: Json, names: readonly string[]): Json {
  if (names.length === 0) return schema;
  const { properties = {}, required = [], ...rest } = schema as { properties?: Json; required?: string[] } & Json;
  const kept = Object.fromEntries(Object.entries(properties).filter(([k]) => !names.includes(k)));
  const stillRequired = required.filter((k) => !names.includes(k));
  return { ...rest, properties: kept, ...(stillRequired.length > 0 ? { required: stillRequired } : {}) };
}

function jsonBody(schemaRef: Json, description: string, example?: unknown): Json {
  return {
    required: true,
    description,
    content: { 'application/json': { schema: schemaRef, ...(example === undefined ? {} : { example }) } },
  };
}

const option = (o: PriceSummary['options'][number]): Json => ({
  scheme: o.scheme,
  network: o.network,
  asset: o.asset,
  amount: o.amount,
  usd: usdString(o.usd),
});

/** The x402scan-style price of an operation, with every accepted option of the challenge behind it, and its MPP offers. */
function paymentInfo(entry: PaidEntry): Json {
  return {
    protocols: entry.mpp ? ['x402', 'mpp'] : ['x402'],
    pricingMode: 'fixed',
    price: usdString(entry.price.usd),
    currency: 'USD',
    x402Version: entry.price.x402Version,
    accepts: [
      ...entry.price.options.map((o) => option(o)),
      // A `base-v1` tool's v2 face: these options are paid with x402 version 2 (PAYMENT-SIGNATURE).
      ...(entry.face?.options.map((o) => ({ ...option(o), x402Version: 2 })) ?? []),
    ],
    ...(entry.mpp ? mppPaymentInfo(entry.mpp) : {}),
  };
}

/** The 402 of a paid operation: the challenge as its body, PAYMENT-REQUIRED where a v2 challenge goes, MPP's too. */
function paymentRequired(entry: PaidEntry, v1: boolean): Json {
  const v2Header = !v1 || entry.face !== undefined;
  return {
    description:
      'Payment required (no payment, or the payment was refused; `error` says why): pay one entry of `accepts` and repeat the call.',
    ...(!v2Header && !entry.mpp
      ? {}
      : {
          headers: {
            ...(v2Header ? { 'PAYMENT-REQUIRED': { $ref: '#/components/headers/PAYMENT-REQUIRED' } } : {}),
            ...(entry.mpp ? MPP_RESPONSE_HEADERS.challenge : {}),
          },
        }),
    content: { 'application/json': { schema: ref(v1 ? 'PaymentRequiredV1' : 'PaymentRequired') } },
  };
}

function paidOperation(entry: PaidEntry, mcpUrl: string): Json {
  const { tool } = entry;
  const v1 = entry.price.x402Version === 1;
  const input = schemaObject(inputJsonSchema(tool));
  const accepts = entry.challenge.accepts as Array<{ scheme?: string }>;
  const probe = tool.method === 'GET' ? 'A GET without a query string' : 'A POST without a body';
  return {
    operationId: tool.name,
    summary: tool.title,
    description: `${tool.description}\n\n${probe} is a free probe: it answers 402 with the price. Invalid input is answered with 400 before any payment is read.`,
    tags: [tool.group],
    // Payment is not authentication: no security requirement (x402 discovery reads `x-payment-info` and the 402).
    security: [],
    parameters: [
      { $ref: `#/components/parameters/${v1 ? 'X-PAYMENT' : 'PAYMENT-SIGNATURE'}` },
      ...(entry.face ? [{ $ref: '#/components/parameters/PAYMENT-SIGNATURE' }] : []),
      ...(tool.method === 'GET' ? parameters(input, 'query', undefined, tool.example as Json | undefined) : []),
    ],
    ...(tool.method === 'GET'
      ? {}
      : { requestBody: jsonBody(ref(`${tool.name}.input`), 'The tool input.', tool.example) }),
    responses: {
      '200': {
        description: 'Paid and settled: the tool output, with the settlement receipt in the payment-response header.',
        headers: {
          [v1 ? 'X-PAYMENT-RESPONSE' : 'PAYMENT-RESPONSE']: {
            $ref: `#/components/headers/${v1 ? 'X-PAYMENT-RESPONSE' : 'PAYMENT-RESPONSE'}`,
          },
          ...(entry.face ? { 'PAYMENT-RESPONSE': { $ref: '#/components/headers/PAYMENT-RESPONSE' } } : {}),
          ...(entry.mpp ? MPP_RESPONSE_HEADERS.receipt : {}),
        },
        content: { 'application/json': { schema: ref(`${tool.name}.output`) } },
      },
      '400': response('BadRequest'),
      '402': paymentRequired(entry, v1),
      '409': response('Conflict'),
      ...(accepts.some((a) => a.scheme === 'upto')
        ? {
            '412': {
              description: 'Permit2 allowance missing (upto): approve Permit2 first.',
              content: { 'application/json': { schema: ref('PaymentRequired') } },
            },
          }
        : {}),
      ...errorResponses(tool.method),
    },
    'x-payment-info': paymentInfo(entry),
    'x-mcp-tool': { name: tool.name, endpoint: mcpUrl },
  };
}

/** The error answers every route can give besides its own (413 and 415 only where a body is read). */
function errorResponses(method: 'GET' | 'POST'): Json {
  return {
    ...(method === 'POST' ? { '413': response('PayloadTooLarge'), '415': response('UnsupportedMediaType') } : {}),
    '429': response('RateLimited'),
    '500': response('Internal'),
    '501': response('NotImplemented'),
    '502': response('BadGateway'),
    '503': response('Unavailable'),
    '504': response('GatewayTimeout'),
  };
}

function freeInput(tool: AnyToolDefinition): Json {
  return schemaObject(inputJsonSchema(tool));
}

function freeOperation(entry: FreeEntry, mcpUrl: string): Json {
  const { tool } = entry;
  const input = freeInput(tool);
  const { params } = openApiPath(tool.path);
  const rest = without(input, params);
  return {
    operationId: tool.name,
    summary: tool.title,
    description: tool.description,
    tags: [tool.group],
    security: [],
    parameters: [
      ...parameters(input, 'path', params, undefined),
      ...(tool.method === 'GET' ? parameters(rest, 'query', undefined, undefined) : []),
    ],
    ...(tool.method === 'POST' ? { requestBody: jsonBody(schemaObject(rest), 'The tool input.') } : {}),
    responses: {
      '200': {
        description: 'The result; free, no payment.',
        content: { 'application/json': { schema: ref(`${tool.name}.output`) } },
      },
      '400': response('BadRequest'),
      '404': response('NotFound'),
      ...errorResponses(tool.method),
    },
    'x-mcp-tool': { name: tool.name, endpoint: mcpUrl },
  };
}

/** The OpenAPI 3.1 document of every route of the registry: paid tools with their x402 price, free helpers, errors. */
export function openApiDocument(catalog: DiscoveryCatalog): Json {
  const components = openApiComponents() as { schemas: Json; headers: Json };
  if (catalog.mpp) Object.assign(components.headers, mppHeaderComponents());
  const paths: Record<string, Json> = {};
  const add = (path: string, origin: string, method: string, operation: Json) => {
    paths[path] = { ...(paths[path] ?? { servers: [{ url: origin }] }), [method.toLowerCase()]: operation };
  };
  for (const entry of catalog.paid) {
    components.schemas[`${entry.tool.name}.input`] = schemaObject(inputJsonSchema(entry.tool));
    components.schemas[`${entry.tool.name}.output`] = schemaObject(outputJsonSchema(entry.tool));
    add(entry.path, entry.origin, entry.tool.method, paidOperation(entry, catalog.urls.mcp));
  }
  for (const entry of catalog.free) {
    components.schemas[`${entry.tool.name}.output`] = schemaObject(outputJsonSchema(entry.tool));
    add(openApiPath(entry.path).path, entry.origin, entry.tool.method, freeOperation(entry, catalog.urls.mcp));
  }
  const origins = [...new Set([...catalog.paid, ...catalog.free].map((e) => e.origin))];
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: {
      title: 'Tollbooth',
      version: catalog.version,
      description: `Utility endpoints sold one call at a time with x402 payments, also served as MCP tools. Call a paid operation without payment to get its price (402 with PAYMENT-REQUIRED), sign one \`accepts\` entry with an x402 client and repeat the call with the payment in PAYMENT-SIGNATURE (X-PAYMENT on x402 v1 operations).${catalog.mpp ? MPP_DESCRIPTION : ''} Nothing is charged for invalid input or a failed call.`,
    },
    servers: origins.map((url) => ({ url })),
    tags: [...new Set([...catalog.paid, ...catalog.free].map((e) => e.tool.group))].map((name) => ({ name })),
    paths,
    components,
    'x-discovery': { llmsTxtUrl: catalog.urls.llms, wellKnownUrl: catalog.urls.wellKnown, mcpUrl: catalog.urls.mcp },
    ...(catalog.mpp ? { 'x-service-info': mppServiceInfo(catalog) } : {}),
  };
}
