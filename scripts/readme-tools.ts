import { toolTableMarkdown } from '../src/catalog.js';
import { loadConfig } from '../src/config.js';
import { tools } from '../tools/index.js';

process.stdout.write(toolTableMarkdown(loadConfig({}), tools) + '\n');
