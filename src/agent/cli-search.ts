/**
 * `tollbooth search <words>`: the discovery indexes of AGENT_DISCOVERY_URLS searched like the `search_services` tool;
 * one line per service on stdout (or the JSON answer with `--json`), unreadable indexes on stderr.
 */
import type { OpenSpends } from '../shared/spends.js';
import { createAgent } from './agent.js';
import { searchServices, type FoundService } from './discover.js';
import { agentLogger, writeErr, writeOut } from './output.js';
import { loadAgentConfig } from './settings.js';

/** One service as a line: price, name, URL, networks, description. */
export function serviceLine(s: FoundService): string {
  const price = s.price ? (s.price.min === s.price.max ? s.price.min : `${s.price.min}–${s.price.max}`) : '?';
  return [price, s.name, s.resource, s.networks.join(','), s.description ?? ''].join('\t').trimEnd();
}

/** Runs `tollbooth search`; returns the exit code (0 found, 1 nothing found, 2 no index configured). */
export async function runSearch(words: readonly string[], json: boolean, openSpends: OpenSpends): Promise<number> {
  const config = loadAgentConfig(process.env);
  const indexes = config.settings.discovery ?? [];
  if (indexes.length === 0) {
    process.stderr.write('no discovery index: set AGENT_DISCOVERY_URLS (comma-separated URLs)\n');
    return 2;
  }
  const log = agentLogger(config, process.env.LOG_LEVEL ? config.logLevel : 'warn');
  const agent = await createAgent(config, log, openSpends);
  try {
    const found = await searchServices(indexes, words, agent);
    for (const error of found.errors) writeErr(`${error}\n`);
    if (json) writeOut(JSON.stringify(found, null, 2) + '\n');
    else for (const s of found.services) writeOut(serviceLine(s) + '\n');
    return found.services.length > 0 ? 0 : 1;
  } finally {
    await agent.close();
  }
}
