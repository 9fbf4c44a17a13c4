/**
 * Where the agent's command-line commands write: a logger on stderr and their stdout/stderr text, both with the
 * agent's secrets (its wallet keys, tokens, URL secrets; src/agent/secrets.ts) blanked in every encoding. The MCP
 * stdio server uses the logger only (its stdout is the MCP channel).
 */
import { createLogger, type Logger, type LogLevel } from '../shared/log.js';
import { redactingLogger, Redactor } from '../shared/redact.js';
import type { AgentConfig } from './settings.js';

/** The secrets of the configuration the command loaded; none until `agentLogger` is called. */
let redactor = new Redactor([]);

/** The agent's logger at `level`, blanking `config`'s secrets; `writeOut`/`writeErr` blank them from then on too. */
export function agentLogger(config: Pick<AgentConfig, 'secrets'>, level: LogLevel): Logger {
  redactor = new Redactor(config.secrets ?? []);
  return redactingLogger(createLogger(level), redactor);
}

/** Writes command output on stdout with the agent's secrets blanked. */
export function writeOut(text: string): void {
  process.stdout.write(redactor.redact(text));
}

/** Writes a command message on stderr with the agent's secrets blanked. */
export function writeErr(text: string): void {
  process.stderr.write(redactor.redact(text));
}
