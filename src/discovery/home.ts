/**
 * `GET /`: a small index of this deployment for people and agents that land on it: every tool with its method, path,
 * price and one line of description, and where to go next (/llms.txt, /openapi.json, /.well-known/x402, /mcp).
 * JSON by default; a browser asking for HTML gets the same as a plain page. Built on the first request.
 */
import type { Express } from 'express';
import type { Config } from '../config/config.js';
import { priceSummary } from '../payments/challenges/pricing.js';
import { resourceUrl, UNASKED, type ChallengeBook } from '../payments/challenges/requirements.js';
import { isPaid, type AnyToolDefinition } from '../tool/tool.js';
import { VERSION } from '../shared/version.js';

interface HomeEntry {
  name: string;
  method: string;
  url: string;
  price: string;
  description: string;
}

/** A description's first sentence; one over `max` characters is cut at a word boundary and ends with an ellipsis. */
export function firstSentence(text: string, max = 240): string {
  const sentence = /^(.+?[.!?])(\s|$)/.exec(text)?.[1] ?? text;
  if (sentence.length <= max) return sentence;
  const cut = sentence.slice(0, max);
  const space = cut.lastIndexOf(' ');
  return `${(space > 0 ? cut.slice(0, space) : cut.slice(0, max - 1)).replace(/[\s,;:(\u2013-]+$/, '')}…`;
}
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function index(config: Config, tools: readonly AnyToolDefinition[], book: ChallengeBook) {
  const base = config.baseUrls.tools.replace(/\/$/, '');
  const entries = tools.map((tool): HomeEntry => {
    const { name, method } = tool;
    const description = firstSentence(tool.description);
    if (!isPaid(tool)) return { name, method, url: `${base}${tool.path}`, price: 'free', description };
    return {
      name,
      method,
      url: resourceUrl(config, tool),
      price: priceSummary(config, tool, book).display,
      description,
    };
  });
  return {
    name: 'Tollbooth',
    version: VERSION,
    about:
      'Utility tools sold per call to AI agents and scripts, paid with x402 stablecoin payments. Call a paid tool without payment to receive its price (HTTP 402 with PAYMENT-REQUIRED).',
    links: {
      llms: `${base}/llms.txt`,
      openapi: `${base}/openapi.json`,
      x402: `${base}/.well-known/x402`,
      mcp: `${base}/mcp`,
      health: `${base}/healthz`,
    },
    tools: entries,
  };
}

function html(doc: ReturnType<typeof index>): string {
  const rows = doc.tools
    .map(
      (t) =>
        `<tr><td><code>${escapeHtml(t.name)}</code></td><td>${t.method} <code>${escapeHtml(t.url)}</code></td><td>${escapeHtml(t.price)}</td><td>${escapeHtml(t.description)}</td></tr>`,
    )
    .join('\n');
  const links = Object.entries(doc.links)
    .map(([k, v]) => `<a href="${escapeHtml(v)}">${k}</a>`)
    .join(' · ');
  return `<!doctype html><html><head><meta charset="utf-8"><title>Tollbooth</title></head><body><h1>Tollbooth ${escapeHtml(doc.version)}</h1><p>${escapeHtml(doc.about)}</p><p>${links}</p><table><tr><th>Tool</th><th>Route</th><th>Price</th><th>What it does</th></tr>\n${rows}\n</table></body></html>\n`;
}

/** Mounts `GET /` (and `HEAD /`): prices under start-up's challenge `book`. */
export function mountHome(
  app: Express,
  config: Config,
  tools: readonly AnyToolDefinition[],
  book: ChallengeBook = UNASKED,
): void {
  let doc: ReturnType<typeof index> | undefined;
  app.get('/', (req, res) => {
    doc ??= index(config, tools, book);
    res.setHeader('Cache-Control', 'public, max-age=300');
    res.vary('Accept'); // the same URL answers JSON or HTML: a shared cache must keep both
    res.setHeader('Access-Control-Allow-Origin', '*');
    if (req.accepts(['json', 'html']) === 'html') res.type('html').send(html(doc));
    else res.json(doc);
  });
}
