import { ToolError } from './errors.js';

/** Appended to the description of a tool whose upstream integration is not built yet, so agents know before paying. */
export const NOT_YET_AVAILABLE_NOTE =
  ' Not available yet on this server: calls are refused with not_implemented after payment verification and are never charged.';

/** The one allowed stub: a handler that refuses with not_implemented (the pipeline then settles nothing). */
export function notYetAvailable(name: string): () => never {
  return () => {
    throw new ToolError(
      'not_implemented',
      `${name} is not available yet on this server: its upstream integration ships in a later release. You have not been charged.`,
    );
  };
}
