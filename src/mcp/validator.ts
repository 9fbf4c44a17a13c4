/**
 * One JSON Schema validator for every MCP server of the process. Left to itself the SDK builds an Ajv instance per
 * server, about 18 KB of every streamable-HTTP session; shared, the sessions cost a few KB each. Compiled validators
 * are kept by the schema's JSON text, so each distinct schema is compiled once (Ajv itself would keep one compilation
 * per schema object it is handed, and elicitation hands it the request's).
 */
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import type {
  JsonSchemaType,
  JsonSchemaValidator,
  jsonSchemaValidator,
} from '@modelcontextprotocol/sdk/validation/types.js';

let shared: jsonSchemaValidator | undefined;

/** The process's one validator, built on first use; only this project's own schemas (elicitation forms) reach it. */
export function sharedValidator(): jsonSchemaValidator {
  if (shared) return shared;
  const ajv = new AjvJsonSchemaValidator();
  const compiled = new Map<string, JsonSchemaValidator<unknown>>();
  shared = {
    getValidator: <T>(schema: JsonSchemaType): JsonSchemaValidator<T> => {
      const key = JSON.stringify(schema);
      let validator = compiled.get(key);
      if (!validator) {
        validator = ajv.getValidator<unknown>(schema);
        compiled.set(key, validator);
      }
      return validator as JsonSchemaValidator<T>;
    },
  };
  return shared;
}
