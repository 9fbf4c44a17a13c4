/**
 * `npm run compare:answers -- record <cli.js> <out.json>` records every answer of a build: `<cli.js> serve` is
 * started on a free port in two deterministic configurations (a local chain with the in-process facilitator and the
 * look-alike upstreams; the embedded defaults without a facilitator), and every free route, every tool over HTTP
 * (bare, OPTIONS, HEAD, wrong method, invalid, unpaid, malformed payments, a real x402 payment and its replay, an MPP
 * credential and its replay) and over MCP streamable HTTP (initialize, tools/list, each tool unpaid, invalid, paid in
 * `_meta`, replayed) is asked in a fixed order. What legitimately differs per run is normalised (test/scripts/answers/
 * normalise.ts); everything else is kept byte for byte.
 *
 * `npm run compare:answers -- diff <a.json> <b.json>` prints every difference (answer id, field, before, after) and
 * exits 1 if there is any.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { diffRecordings } from './answers/diff.js';
import { startDefaultsTarget, startPaidTarget, type RecordingTarget } from './answers/environment.js';
import { readCatalog } from './answers/inputs.js';
import type { Recording, RecordedAnswer } from './answers/record.js';
import { recordFreeRoutes, recordHttpTool } from './answers/scenarios-http.js';
import { recordMcp } from './answers/scenarios-mcp.js';
import { Session } from './answers/session.js';

const say = (line: string) => process.stderr.write(line + '\n');

/** Records every answer of one running configuration. */
async function recordTarget(target: RecordingTarget): Promise<RecordedAnswer[]> {
  const session = new Session(target.name, target.server.url, target.paid?.payers ?? []);
  try {
    const catalog = await readCatalog(session.client);
    await recordFreeRoutes(session);
    for (const tool of catalog) await recordHttpTool(session, tool);
    await recordMcp(session, catalog);
    return session.answers;
  } finally {
    session.close();
  }
}

async function record(cli: string, out: string): Promise<void> {
  const started = Date.now();
  const answers: RecordedAnswer[] = [];
  for (const start of [startPaidTarget, startDefaultsTarget]) {
    const target = await start(cli);
    try {
      const recorded = await recordTarget(target);
      say(`${target.name}: ${recorded.length} answers`);
      answers.push(...recorded);
    } finally {
      await target.stop();
    }
  }
  const recording: Recording = { cli, recordedAt: new Date().toISOString(), answers };
  writeFileSync(out, JSON.stringify(recording, null, 2) + '\n');
  say(`recorded ${answers.length} answers of ${cli} in ${((Date.now() - started) / 1000).toFixed(1)} s → ${out}`);
}

function diff(a: string, b: string): void {
  const before = JSON.parse(readFileSync(a, 'utf8')) as Recording;
  const after = JSON.parse(readFileSync(b, 'utf8')) as Recording;
  const differences = diffRecordings(before, after);
  for (const d of differences) {
    process.stdout.write(`${d.id}  ${d.field}\n  before: ${d.before}\n  after:  ${d.after}\n`);
  }
  const answered = `${before.answers.length} answers before, ${after.answers.length} after`;
  say(differences.length === 0 ? `identical (${answered})` : `${differences.length} differences (${answered})`);
  process.exitCode = differences.length === 0 ? 0 : 1;
}

async function main(): Promise<void> {
  const [command, first, second] = process.argv.slice(2);
  if (command === 'record' && first && second) return record(resolve(first), resolve(second));
  if (command === 'diff' && first && second) return diff(first, second);
  say('usage: answers-compare.ts record <cli.js> <out.json> | diff <a.json> <b.json>');
  process.exitCode = 2;
}

main().catch((err: unknown) => {
  say(`answers-compare failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exitCode = 2;
});
