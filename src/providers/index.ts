/**
 * Upstream API clients reached by handlers through their context.
 * Each upstream gets its own module here when its endpoint is built.
 */
export type Providers = Record<string, never>;

/** Builds the provider set from configuration. */
export function createProviders(): Providers {
  return {};
}
