/**
 * Reading a YAML document a seller publishes (an OpenAPI document as `openapi.yaml`) with the `yaml` package, as
 * data only: the YAML 1.2 core schema, no custom tags and no YAML 1.1 ones (`!!binary`, `!!set`, `!!timestamp`…), no
 * merge keys, duplicate keys refused, aliases bounded (an alias bomb is refused, not expanded). The text is already
 * size-bounded by the reader; the package is loaded on first use.
 */

/** The alias budget handed to `yaml`'s `maxAliasCount` (it weighs each alias by the size of what it repeats). */
const MAX_ALIAS_COUNT = 100;

/** Parses `text` read from `url`; throws a sentence naming the URL when it is not plain YAML data. */
export async function parseYaml(text: string, url: string): Promise<unknown> {
  // Imported on first use; a bundle may hand the CommonJS build back as `default` only.
  const yaml: typeof import('yaml') & { default?: typeof import('yaml') } = await import('yaml');
  const parseDocument = yaml.parseDocument ?? yaml.default!.parseDocument;
  const doc = parseDocument(text, {
    version: '1.2',
    schema: 'core',
    customTags: [],
    resolveKnownTags: false,
    merge: false,
    uniqueKeys: true,
    logLevel: 'silent',
    prettyErrors: false,
  });
  if (doc.errors.length > 0) throw new Error(`${url} is not YAML`);
  if (doc.warnings.some((w) => w.code === 'TAG_RESOLVE_FAILED'))
    throw new Error(`${url} uses a YAML tag this reader does not accept`);
  try {
    return doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch {
    throw new Error(`${url} repeats its YAML aliases past ${MAX_ALIAS_COUNT}`);
  }
}
