import { declareDiscoveryExtension } from '@x402/extensions/bazaar';
import { declareBuilderCodeExtension } from '@x402/extensions/builder-code';
import { declarePaymentIdentifierExtension } from '@x402/extensions/payment-identifier';
import { describe, expect, it } from 'vitest';
import {
  bazaarDeclaration,
  builderCodeDeclaration,
  mcpBazaarDeclaration,
  paymentIdentifierDeclaration,
} from '../../../src/payments/challenges/declarations.js';
import { inputJsonSchema } from '../../../src/tool/tool-schema.js';
import { paidTools as tools } from '../../../tools/index.js';

/** The official bazaar declaration of an HTTP route as the SDK fills it in at request time (method from the route). */
function officialBazaar(
  method: 'GET' | 'POST',
  example: Record<string, unknown>,
  inputSchema: Record<string, unknown>,
) {
  const declared = (
    method === 'POST'
      ? declareDiscoveryExtension({ bodyType: 'json', input: example, inputSchema })
      : declareDiscoveryExtension({ input: example, inputSchema })
  ).bazaar as {
    info: { input: Record<string, unknown> };
  };
  declared.info.input = { type: 'http', method, ...declared.info.input };
  return declared;
}

describe('our extension declarations are byte for byte what the official helpers declare', () => {
  it('payment-identifier and builder-code', () => {
    for (const required of [false, true])
      expect(JSON.stringify(paymentIdentifierDeclaration(required))).toBe(
        JSON.stringify(declarePaymentIdentifierExtension(required)),
      );
    expect(JSON.stringify(builderCodeDeclaration('tollbooth'))).toBe(
      JSON.stringify(declareBuilderCodeExtension('tollbooth')),
    );
  });

  it('bazaar, for every tool of the registry', () => {
    for (const tool of tools) {
      const example = (tool.example ?? {}) as Record<string, unknown>;
      const schema = inputJsonSchema(tool);
      expect(JSON.stringify(bazaarDeclaration(tool.method, example, schema)), tool.name).toBe(
        JSON.stringify(officialBazaar(tool.method, example, schema)),
      );
    }
  });

  it('bazaar for an MCP tool, for every tool of the registry', () => {
    for (const tool of tools) {
      const example = tool.example as Record<string, unknown> | undefined;
      const official = declareDiscoveryExtension({
        toolName: tool.name,
        description: tool.description,
        transport: 'streamable-http',
        inputSchema: inputJsonSchema(tool),
        ...(example === undefined ? {} : { example }),
      });
      expect(
        JSON.stringify(mcpBazaarDeclaration(tool.name, tool.description, inputJsonSchema(tool), example)),
        tool.name,
      ).toBe(JSON.stringify(official));
    }
  });
});
