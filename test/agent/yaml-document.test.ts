import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { CATALOG_LIMITS } from '../../src/agent/catalog.js';
import { probeOpenApi } from '../../src/agent/openapi-source.js';
import { startX402Catalog, type X402Catalog } from '../support/x402-catalog.js';

const limits = {
  timeoutMs: 5000,
  maxTools: CATALOG_LIMITS.maxTools,
  maxDocumentBytes: CATALOG_LIMITS.maxDocumentBytes,
};

/** A paid PUT with a header parameter, in YAML. */
const NOTES = `
openapi: 3.1.0
info: { title: Notes, version: "1" }
paths:
  /notes/{id}:
    put:
      operationId: putNote
      parameters:
        - { name: id, in: path, required: true, schema: { type: string } }
        - { name: X-Tenant, in: header, required: true, schema: { type: string } }
      requestBody:
        content:
          application/json:
            schema: { type: object, properties: { text: { type: string } } }
      x-payment-info: { pricingMode: fixed, price: "0.002" }
`;

const running: X402Catalog[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((c) => c.close()));
});

/** Serves `text` at `path` with `type` as its content type. */
async function serve(text: string, path = '/openapi.yaml', type = 'application/yaml'): Promise<X402Catalog> {
  const catalog = await startX402Catalog(
    (res: ServerResponse) => res.writeHead(200, { 'content-type': type }).end(text),
    path,
  );
  running.push(catalog);
  return catalog;
}

describe('an OpenAPI document published in YAML', () => {
  it("is found at the origin's /openapi.yaml and read like the JSON one: method, header parameter, body", async () => {
    const catalog = await serve(NOTES);
    const { at, items } = await probeOpenApi(catalog.url, limits);
    expect(at).toBe(`${catalog.url}/openapi.yaml`);
    expect(items.map((i) => [i.name, i.inputSchema])).toEqual([
      [
        'putNote',
        {
          type: 'object',
          properties: { text: { type: 'string' }, id: { type: 'string' }, 'X-Tenant': { type: 'string' } },
          required: ['id', 'X-Tenant'],
        },
      ],
    ]);
    expect(items[0]!.request({ id: 'a', 'X-Tenant': 't1', text: 'hi' })).toEqual({
      url: `${catalog.url}/notes/a`,
      method: 'PUT',
      body: '{"id":"a","text":"hi"}',
      headers: { 'x-tenant': 't1' },
    });
  });

  it('is read as YAML at a URL of its own served as text/plain, when it is not JSON', async () => {
    const catalog = await serve(NOTES, '/spec', 'text/plain');
    const { items } = await probeOpenApi(`${catalog.url}/spec`, limits);
    expect(items.map((i) => i.name)).toEqual(['putNote']);
  });
});

describe('a hostile YAML document', () => {
  const refused = async (text: string, reason: RegExp) => {
    const catalog = await serve(text);
    await expect(probeOpenApi(catalog.url, limits)).rejects.toThrow(reason);
  };

  it('is refused when its aliases would expand past the alias budget (a billion laughs)', async () => {
    const levels = ['a: &a [x, x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 9; i++)
      levels.push(
        `l${i}: &l${i} [${Array(10)
          .fill(i === 1 ? '*a' : `*l${i - 1}`)
          .join(', ')}]`,
      );
    await refused(`openapi: 3.1.0\npaths: {}\n${levels.join('\n')}\n`, /repeats its YAML aliases past 100/);
  });

  it('is refused when it uses a tag of its own or a YAML 1.1 one', async () => {
    await refused(
      'openapi: 3.1.0\npaths: !!js/function "function () {}"\n',
      /uses a YAML tag this reader does not accept/,
    );
    await refused('openapi: 3.1.0\npaths: {}\nx: !!binary aGk=\n', /uses a YAML tag this reader does not accept/);
  });

  it('is refused when a key repeats, or when it is not an object', async () => {
    await refused('openapi: 3.1.0\nopenapi: 3.0.0\npaths: {}\n', /openapi\.yaml is not YAML/);
    await refused('- openapi\n- paths\n', /openapi\.yaml is not a YAML object/);
  });
});
