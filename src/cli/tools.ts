import type { CliCommand } from './command.js';

/** `tollbooth tools`: every tool with its method, path and price (free helpers say free). */
export const toolsCommand: CliCommand = {
  usage: `tollbooth tools [--json]

  Lists every tool: the paid ones with their method, path and cheapest price, then the free helpers.
  --json   one JSON array instead of the table`,
  options: { json: { type: 'boolean' } },
  async run(args) {
    const [{ loadConfig }, { priceSummary }, { tools }, { isPaid }] = await Promise.all([
      import('../config/config.js'),
      import('../payments/challenges/pricing.js'),
      import('../../tools/index.js'),
      import('../tool/tool.js'),
    ]);
    const config = loadConfig(process.env);
    const rows = tools.map((tool) => ({
      name: tool.name,
      method: tool.method,
      path: tool.path,
      price: isPaid(tool) ? priceSummary(config, tool).display : 'free',
    }));
    if (args.values.json === true) process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
    else
      for (const r of rows)
        process.stdout.write(`${r.name.padEnd(22)} ${r.method.padEnd(5)} ${r.path.padEnd(34)} ${r.price}\n`);
    return 0;
  },
};
