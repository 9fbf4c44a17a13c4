import { z } from 'zod';
import { UsageError, type CliCommand } from './command.js';

/** The values of `search`'s options. */
const SearchValues = z.object({ json: z.boolean().default(false) });

/** `tollbooth search <words>`: paid services in the discovery indexes (AGENT_DISCOVERY_URLS) whose name, description or URL hold the words. */
export const searchCommand: CliCommand<z.output<typeof SearchValues>> = {
  usage: `tollbooth search <words>... [--json]

  Searches the discovery indexes named in AGENT_DISCOVERY_URLS (Bazaar-style discovery APIs or origins publishing
  /.well-known/x402) for paid HTTP services holding every word in their name, description or URL. Prints one line
  per service: price range in US dollars, name, URL, networks, description. Nothing is paid.
  Exit: 0 found, 1 nothing found, 2 usage or no index configured.

  --json                   the whole answer as JSON`,
  options: { json: { type: 'boolean' } },
  positionals: 20,
  values: SearchValues,
  async run(args) {
    const words = args.positionals.flatMap((p) => p.split(/\s+/)).filter(Boolean);
    if (words.length === 0) throw new UsageError('name at least one word to search for');
    const [{ runSearch }, { openStore }] = await Promise.all([
      import('../agent/cli-search.js'),
      import('../store/open.js'),
    ]);
    return runSearch(words, args.values.json, openStore);
  },
};
