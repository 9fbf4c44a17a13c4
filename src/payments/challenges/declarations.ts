/**
 * The x402 extensions this server declares in its challenges (payment-identifier, builder-code, bazaar), written as
 * plain data so that serving a challenge never loads `@x402/extensions` (with its schema compiler). A test keeps each
 * declaration equal, key order included, to what the official `declare…Extension` helpers build.
 */

const DIALECT = 'https://json-schema.org/draft/2020-12/schema';
const CODE_PATTERN = '^[a-z0-9_]{1,32}$';

/** An extension as it stands in `PaymentRequired.extensions`. */
export interface Declaration {
  info: Record<string, unknown>;
  schema: Record<string, unknown>;
}

const PAYMENT_IDENTIFIER_SCHEMA = {
  $schema: DIALECT,
  type: 'object',
  properties: {
    required: { type: 'boolean' },
    id: { type: 'string', minLength: 16, maxLength: 128, pattern: '^[a-zA-Z0-9_-]+$' },
  },
  required: ['required'],
};

/** `payment-identifier`: the client may (or, if required, must) send an idempotency id. */
export function paymentIdentifierDeclaration(required: boolean): Declaration {
  return { info: { required }, schema: PAYMENT_IDENTIFIER_SCHEMA };
}

/** Service codes of a builder-code: client 5 + server 5 + facilitator 1 (ERC-8021 schema 2). */
const SERVICE_CODE_SLOTS = 11;

const BUILDER_CODE_SCHEMA = {
  $schema: DIALECT,
  type: 'object',
  properties: {
    a: { type: 'string', pattern: CODE_PATTERN, description: 'App builder code' },
    w: { type: 'string', pattern: CODE_PATTERN, description: 'Wallet builder code' },
    s: {
      type: 'array',
      maxItems: SERVICE_CODE_SLOTS,
      items: { type: 'string', pattern: CODE_PATTERN },
      description: 'Service builder codes',
    },
  },
  additionalProperties: false,
};

/** `builder-code` (ERC-8021 attribution): our app code. */
export function builderCodeDeclaration(appCode: string): Declaration {
  return { info: { a: appCode }, schema: BUILDER_CODE_SCHEMA };
}

/** `bazaar` (discovery) for an HTTP route: the method, the example input and the input's JSON Schema. */
export function bazaarDeclaration(
  method: 'GET' | 'POST',
  example: Record<string, unknown>,
  inputSchema: Record<string, unknown>,
): Declaration {
  const body = method === 'POST';
  const input = body
    ? { type: 'http', method, bodyType: 'json', body: example }
    : { type: 'http', method, queryParams: example };
  const properties = body
    ? {
        type: { type: 'string', const: 'http' },
        method: { type: 'string', enum: ['POST', 'PUT', 'PATCH'] },
        bodyType: { type: 'string', enum: ['json', 'form-data', 'text'] },
        body: inputSchema,
      }
    : {
        type: { type: 'string', const: 'http' },
        method: { type: 'string', enum: ['GET', 'HEAD', 'DELETE'] },
        queryParams: { type: 'object', ...inputSchema },
      };
  const required = body ? ['type', 'method', 'bodyType', 'body'] : ['type', 'method'];
  return {
    info: { input },
    schema: {
      $schema: DIALECT,
      type: 'object',
      properties: { input: { type: 'object', properties, required, additionalProperties: false } },
      required: ['input'],
    },
  };
}

/** `bazaar` (discovery) for an MCP tool over streamable HTTP: its name, description, input schema and example. */
export function mcpBazaarDeclaration(
  toolName: string,
  description: string,
  inputSchema: Record<string, unknown>,
  example?: Record<string, unknown>,
): { bazaar: Declaration } {
  const input = {
    type: 'mcp',
    toolName,
    description,
    transport: 'streamable-http',
    inputSchema,
    ...(example === undefined ? {} : { example }),
  };
  const properties = {
    type: { type: 'string', const: 'mcp' },
    toolName: { type: 'string' },
    description: { type: 'string' },
    transport: { type: 'string', enum: ['streamable-http'] },
    inputSchema: { type: 'object' },
    ...(example === undefined ? {} : { example: { type: 'object' } }),
  };
  return {
    bazaar: {
      info: { input },
      schema: {
        $schema: DIALECT,
        type: 'object',
        properties: {
          input: {
            type: 'object',
            properties,
            required: ['type', 'toolName', 'inputSchema'],
            additionalProperties: false,
          },
        },
        required: ['input'],
      },
    },
  };
}
