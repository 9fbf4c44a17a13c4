import { readFileSync, writeFileSync } from 'node:fs';
import { toolTableMarkdown } from '../../src/tool/catalog.js';
import { loadConfig } from '../../src/config/config.js';
import { paidTools as tools } from '../../tools/index.js';

/** Rewrites the tool table between the markers in README.md from the definitions. */
const START = /<!-- tools:start[^>]*-->/;
const END = '<!-- tools:end -->';
const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const start = readme.match(START);
if (!start || start.index === undefined) throw new Error('README.md has no tools:start marker');
const from = start.index + start[0].length;
const to = readme.indexOf(END);
const table = toolTableMarkdown(loadConfig({}), tools);
writeFileSync(new URL('../../README.md', import.meta.url), `${readme.slice(0, from)}\n${table}\n${readme.slice(to)}`);
process.stderr.write('README.md tool table updated\n');
