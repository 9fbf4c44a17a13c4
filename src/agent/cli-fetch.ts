/**
 * `tollbooth fetch <url>`: one request to any x402 (v1 or v2) or MPP seller, paid under the same wallets, budget,
 * approvals and spending ledger as `tollbooth call` (the remote caller's own path). The seller's body goes to stdout
 * (or the `--output` file); the receipt and messages to stderr.
 */
import { writeFileSync } from 'node:fs';
import type { OpenSpends } from '../shared/spends.js';
import { agentLogger, writeOut } from './output.js';
import { createAgent } from './agent.js';
import { exitCodeOf, notPaidSummary, printPaymentNotes, stderrLine } from './cli-call.js';
import { dryRunSummary } from './dry-run-summary.js';
import type { CallOutcome } from './outcome.js';
import type { RemoteRequest } from './remote.js';
import { loadAgentConfig } from './settings.js';

/** `tollbooth fetch` arguments, parsed by the command line (src/cli/fetch.ts). */
export interface FetchArgs {
  url: string;
  method: string;
  /** Header names in lower case. */
  headers: Record<string, string>;
  body?: string;
  /** A file the seller's body is written to instead of stdout. */
  output?: string;
  maxUsd?: number;
  /** The price expected (`--expect-price`): one more than AGENT_PRICE_DRIFT above it is refused without paying. */
  expectUsd?: number;
  dryRun: boolean;
  /** With `dryRun`: the whole report, not its short summary. */
  full?: boolean;
  yes: boolean;
}

/** The request `tollbooth fetch` sends (accept: anything, unless a header says otherwise). */
export function fetchRequest(args: Pick<FetchArgs, 'url' | 'method' | 'headers' | 'body'>): RemoteRequest {
  return {
    url: args.url,
    method: args.method,
    headers: { accept: '*/*', ...args.headers },
    ...(args.body !== undefined ? { body: args.body } : {}),
  };
}

/** The seller's body as bytes to print: text as it came, JSON pretty-printed. */
function bodyText(body: unknown): string {
  if (typeof body === 'string') return body;
  return JSON.stringify(body, null, 2) + '\n';
}

/** Writes an outcome: the seller's body (or the dry run's report) on stdout or to `output`, receipt and messages on stderr. */
function printFetch(outcome: CallOutcome, args: FetchArgs): void {
  const out = (text: string): void => {
    if (args.output) writeFileSync(args.output, text);
    else writeOut(text);
  };
  const err = stderrLine;
  printPaymentNotes(outcome);
  switch (outcome.type) {
    case 'success':
      return out(bodyText(outcome.output));
    case 'dry_run':
      err('dry run', outcome.report.verdict);
      return writeOut(JSON.stringify(args.full ? outcome.report : dryRunSummary(outcome.report), null, 2) + '\n');
    case 'payment_required':
      err('not paid', outcome.hint);
      return writeOut(JSON.stringify(notPaidSummary(outcome.challenge, outcome.hint, outcome.mpp), null, 2) + '\n');
    case 'refused':
      return err('error', outcome.error.toBody());
    case 'remote_error':
      err('remote answered', outcome.status);
      return out(bodyText(outcome.body));
  }
}

/** Runs `tollbooth fetch`, paying under the ledger `openSpends` opens (given by the composition root); returns the exit code. */
export async function runFetch(args: FetchArgs, openSpends: OpenSpends): Promise<number> {
  const config = loadAgentConfig(process.env);
  // Quiet by default: stderr carries the receipt; LOG_LEVEL=info shows the logs too.
  const log = agentLogger(config, process.env.LOG_LEVEL ? config.logLevel : 'warn');
  const agent = await createAgent(config, log, openSpends);
  try {
    const outcome = await agent.caller.fetchUrl(fetchRequest(args), {
      signal: new AbortController().signal,
      approve: async () => (args.yes ? 'accepted' : 'unavailable'),
      ...(args.maxUsd !== undefined ? { maxUsdPerCall: args.maxUsd } : {}),
      ...(args.expectUsd !== undefined ? { expectUsd: args.expectUsd } : {}),
      dryRun: args.dryRun,
    });
    printFetch(outcome, args);
    return exitCodeOf(outcome);
  } finally {
    await agent.close();
  }
}
