import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { portableSchema } from '../../src/shared/mcp-wire.js';
import { priceSummary } from '../../src/payments/challenges/pricing.js';
import { resourceUrl } from '../../src/payments/challenges/requirements.js';
import { inputJsonSchema } from '../../src/tool/tool-schema.js';
import { freeTools, paidTools as tools } from '../../tools/index.js';
import { asMcpChallenge, connectHttpClient } from '../support/mcp.js';
import { decodeHeader, startTestServer, type TestServer } from '../support/server.js';

type Json = Record<string, any>;

/** How one surface shows a tool; fields a surface cannot carry are left out. */
interface Seen {
  name?: string;
  method?: string;
  path?: string;
  usd?: number;
  input?: Json;
}

let server: TestServer;
let client: Client;
let openapi: Json;
let wellKnown: Json;
let llms: string;
let listed: Json[];

beforeAll(async () => {
  // The token group lives on another origin, as in a real deployment: paths and servers must follow each group.
  server = await startTestServer({ BASE_URL_TOKEN: 'https://token.example.com' });
  client = await connectHttpClient(server.url);
  openapi = (await (await fetch(`${server.url}/openapi.json`)).json()) as Json;
  wellKnown = (await (await fetch(`${server.url}/.well-known/x402`)).json()) as Json;
  llms = await (await fetch(`${server.url}/llms.txt`)).text();
  listed = (await client.listTools()).tools as Json[];
});
afterAll(async () => {
  await client.close();
  await server.close();
});

/** Any form of an object schema reduced to what the caller must send: its properties and required fields. */
function canonical(schema: Json | undefined): Json | undefined {
  if (!schema) return undefined;
  const required = [...((schema.required ?? []) as string[])].sort();
  return withoutStrictness(
    portableSchema({
      type: 'object',
      properties: schema.properties ?? {},
      ...(required.length > 0 ? { required } : {}),
    }),
  );
}

/**
 * The schema without `additionalProperties: false`: the x402 challenge keeps the bytes of the first release (its
 * bazaar declaration predates strict inputs), while MCP and OpenAPI also say that unknown fields are refused.
 */
function withoutStrictness(node: unknown): Json {
  if (Array.isArray(node)) return node.map(withoutStrictness);
  if (node === null || typeof node !== 'object') return node as Json;
  return Object.fromEntries(
    Object.entries(node)
      .filter(([k, v]) => !(k === 'additionalProperties' && v === false))
      .map(([k, v]) => [k, withoutStrictness(v)]),
  );
}

/** The cheapest price of an `accepts` list in USD, from each network's decimals (version-1 `base` is eip155:8453). */
function cheapest(accepts: Json[]): number {
  const networks = server.runtime.config.networks;
  return Math.min(
    ...accepts.map((a) => {
      const id = a.network === 'base' ? 'eip155:8453' : a.network;
      const decimals = networks.find((n) => n.id === id)?.decimals;
      if (decimals === undefined) throw new Error(`unknown network ${a.network}`);
      return Number(a.amount ?? a.maxAmountRequired) / 10 ** decimals;
    }),
  );
}

function operations(): Array<{ path: string; method: string; op: Json }> {
  return Object.entries(openapi.paths as Json).flatMap(([path, item]) =>
    Object.entries(item as Json)
      .filter(([method]) => ['get', 'post'].includes(method))
      .map(([method, op]) => ({ path, method: method.toUpperCase(), op: op as Json })),
  );
}

/** The input schema of an OpenAPI operation: its JSON body schema, or its parameters put back together. */
function openApiInput(op: Json): Json {
  const body = op.requestBody?.content?.['application/json']?.schema as Json | undefined;
  if (body) return body.$ref ? openapi.components.schemas[String(body.$ref).split('/').pop()!] : body;
  const params = (op.parameters ?? []) as Json[];
  return {
    properties: Object.fromEntries(params.map((p) => [p.name, p.schema])),
    required: params.filter((p) => p.required).map((p) => p.name),
  };
}

function fromOpenApi(name: string): Seen {
  const found = operations().find((o) => o.op.operationId === name);
  if (!found) return {};
  const price = found.op['x-payment-info']?.price as string | undefined;
  return {
    name,
    method: found.method,
    path: found.path,
    ...(price ? { usd: Number(price) } : {}),
    input: canonical(openApiInput(found.op)),
  };
}

/** The caller's input as the bazaar extension describes it (body for POST, query parameters for GET). */
function bazaarInput(bazaar: Json | undefined): Json | undefined {
  const input = bazaar?.schema?.properties?.input?.properties;
  return canonical(input?.body ?? input?.queryParams);
}

const LLMS_LINE =
  /^- \[(?<name>[^\]]+)\]\((?<url>[^)]+)\): (?<method>GET|POST) (?<path>\S+) — (?:from \$(?<usd>[\d.]+) per call \(x402 v\d\)|free) — .+$/;

function fromLlms(name: string): Seen {
  for (const line of llms.split('\n')) {
    const m = LLMS_LINE.exec(line);
    if (m?.groups?.name === name) {
      const { method, path, usd } = m.groups;
      expect(decodeURIComponent(new URL(m.groups.url!).pathname)).toBe(path);
      return { name, method, path, ...(usd ? { usd: Number(usd) } : {}) };
    }
  }
  return {};
}

describe('every paid tool appears identically in OpenAPI, /.well-known/x402, llms.txt, its 402 challenge and MCP tools/list', () => {
  it('lists exactly the registry on every surface, paid and free apart', () => {
    const paid = tools.map((t) => t.name);
    const free = freeTools.map((t) => t.name);
    expect(operations().map((o) => o.op.operationId)).toEqual([...paid, ...free]);
    expect(
      operations()
        .filter((o) => o.op['x-payment-info'])
        .map((o) => o.op.operationId),
    ).toEqual(paid);
    expect((wellKnown.items as Json[]).filter((i) => i.type === 'http').map((i) => i.name)).toEqual(paid);
    expect(
      (wellKnown.items as Json[]).filter((i) => i.type === 'mcp').map((i) => i.extensions.bazaar.info.input.toolName),
    ).toEqual(paid);
    expect(wellKnown.resources).toEqual(tools.map((t) => resourceUrl(server.runtime.config, t)));
    expect(llms.split('\n').flatMap((l) => LLMS_LINE.exec(l)?.groups?.name ?? [])).toEqual([...paid, ...free]);
    expect(listed.map((t) => t.name)).toEqual([...paid, ...free]);
  });

  for (const tool of tools) {
    it(`${tool.name}: same name, method, path, price and input schema everywhere`, async () => {
      const url = new URL(resourceUrl(server.runtime.config, tool));
      const expected = {
        name: tool.name,
        method: tool.method,
        path: url.pathname,
        usd: priceSummary(server.runtime.config, tool).usd,
        input: canonical(inputJsonSchema(tool)),
      };

      const res = await fetch(server.url + tool.path, { method: tool.method });
      expect(res.status).toBe(402);
      const challenge = (
        tool.group === 'transfers' ? await res.json() : decodeHeader(res.headers.get('payment-required'))
      ) as Json;
      const httpItem = (wellKnown.items as Json[]).find((i) => i.type === 'http' && i.name === tool.name)!;
      const mcpItem = (wellKnown.items as Json[]).find((i) => i.type === 'mcp' && i.name === tool.name)!;
      const mcpTool = listed.find((t) => t.name === tool.name)!;
      const mcpCall = await client.callTool({ name: tool.name });

      const v1 = challenge.x402Version === 1;
      const challengeSeen: Seen = {
        method: v1 ? challenge.accepts[0].outputSchema.input.method : challenge.extensions.bazaar.info.input.method,
        path: new URL(v1 ? challenge.accepts[0].resource : challenge.resource.url).pathname,
        usd: cheapest(challenge.accepts),
        // A version-1 challenge has the specification's input descriptor (type, method, discoverable) and no input schema.
        ...(v1 ? {} : { input: bazaarInput(challenge.extensions.bazaar) }),
      };
      const seen = {
        openapi: fromOpenApi(tool.name),
        wellKnownHttp: {
          name: httpItem.name,
          method: httpItem.method,
          path: new URL(httpItem.resource).pathname,
          usd: cheapest(httpItem.accepts),
          ...(v1 ? {} : { input: bazaarInput(httpItem.extensions?.bazaar) }),
        },
        wellKnownMcp: {
          name: mcpItem.extensions.bazaar.info.input.toolName,
          usd: cheapest(mcpItem.accepts),
          input: canonical(mcpItem.extensions.bazaar.info.input.inputSchema),
        },
        llms: fromLlms(tool.name),
        challenge: challengeSeen,
        mcpList: { name: mcpTool.name, usd: mcpTool._meta['x402/price'].usd, input: canonical(mcpTool.inputSchema) },
        mcpChallenge: { usd: cheapest((mcpCall.structuredContent as Json).accepts) },
      };
      const { name, method, path, usd, input } = expected;
      expect(seen).toEqual({
        openapi: { name, method, path, usd, input },
        wellKnownHttp: { name, method, path, usd, ...(v1 ? {} : { input }) },
        wellKnownMcp: { name, usd, input },
        llms: { name, method, path, usd },
        challenge: { method, path, usd, ...(v1 ? {} : { input }) },
        mcpList: { name, usd, input },
        mcpChallenge: { usd },
      });
      // The well-known file and MCP hand out the very challenge the route answers with.
      expect(httpItem.accepts).toEqual(challenge.accepts);
      expect(mcpCall.structuredContent).toEqual(asMcpChallenge(challenge, tool.name));
      if (v1)
        expect(challenge.accepts[0].outputSchema.input).toMatchObject({
          type: 'http',
          method: tool.method,
          discoverable: true,
        });
      else expect(httpItem.extensions).toEqual(challenge.extensions);
    });
  }

  for (const tool of freeTools) {
    it(`${tool.name} (free): same name, method, path and input schema in OpenAPI and llms.txt, and never a price`, () => {
      const path = tool.path.replace(/:(\w+)/g, '{$1}');
      const input = canonical(z.toJSONSchema(tool.input, { io: 'input', unrepresentable: 'any' }) as Json);
      expect(fromOpenApi(tool.name)).toEqual({ name: tool.name, method: tool.method, path, input });
      expect(fromLlms(tool.name)).toEqual({ name: tool.name, method: tool.method, path });
      expect(listed.find((t) => t.name === tool.name)?._meta?.['x402/price']).toBeUndefined();
      expect((wellKnown.items as Json[]).some((i) => i.name === tool.name)).toBe(false);
    });
  }
});
