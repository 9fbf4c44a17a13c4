/** The HTTP answers: free routes, then every tool bare, invalid, unpaid, with bad, real, replayed and MPP payments. */
import { signCredential } from '../../support/mpp.js';
import { headerOf, jsonHeaders, type AskedRequest } from './http.js';
import { invalidInput, queryOf, validInput, type CatalogTool } from './inputs.js';
import { challengeOf, payableEntry, signFor, type Session } from './session.js';

/** The routes that take no payment: home, health, discovery, metrics refusals, 404 and 405. */
export async function recordFreeRoutes(s: Session): Promise<void> {
  const get = (path: string, headers: Array<[string, string]> = []): AskedRequest => ({
    method: 'GET',
    path,
    headers,
  });
  await s.ask('route/home', get('/'));
  await s.ask('route/home-html', get('/', [['accept', 'text/html']]));
  await s.ask('route/healthz', get('/healthz'));
  await s.ask('route/readyz', get('/readyz'));
  await s.ask('route/well-known-x402', get('/.well-known/x402'));
  await s.ask('route/well-known-openapi', get('/.well-known/openapi.json'));
  await s.ask('route/openapi', get('/openapi.json'));
  await s.ask('route/llms', get('/llms.txt'));
  await s.ask('route/not-found', get('/no/such/route'));
  await s.ask('route/not-found-post', { method: 'POST', path: '/no/such/route', headers: jsonHeaders(), body: '{}' });
  await s.ask('route/head-home', { method: 'HEAD', path: '/', headers: [] });
  await s.ask('route/mcp-get-no-session', get('/mcp', [['accept', 'text/event-stream']]));
  await s.ask('route/mcp-delete-no-session', { method: 'DELETE', path: '/mcp', headers: [] });
}

/** The request of a tool call with an input (query on GET, JSON body on POST) and extra headers. */
export function callRequest(
  tool: CatalogTool,
  input: Record<string, unknown> | undefined,
  extra: Array<[string, string]> = [],
  method: string = tool.method,
): AskedRequest {
  if (tool.method === 'GET') return { method, path: tool.path + queryOf(input), headers: extra };
  if (input === undefined) return { method, path: tool.path, headers: extra };
  return { method, path: tool.path, headers: jsonHeaders(extra), body: JSON.stringify(input) };
}

/** The answers that need no payment: bare probe, OPTIONS, HEAD, wrong method, invalid and malformed input, unpaid. */
async function recordUnpaid(s: Session, tool: CatalogTool): Promise<void> {
  const id = (what: string) => `http/${tool.name}/${what}`;
  await s.ask(id('bare'), callRequest(tool, undefined));
  await s.ask(id('options'), {
    method: 'OPTIONS',
    path: tool.path,
    headers: [
      ['origin', 'https://example.test'],
      ['access-control-request-method', tool.method],
    ],
  });
  if (tool.method === 'GET') {
    await s.ask(id('head-bare'), { method: 'HEAD', path: tool.path, headers: [] });
    await s.ask(id('head-valid'), callRequest(tool, validInput(tool), [], 'HEAD'));
  }
  await s.ask(id('wrong-method'), { method: 'DELETE', path: tool.path, headers: [] });
  await s.ask(id('invalid'), callRequest(tool, invalidInput(tool)));
  if (tool.method === 'POST') {
    await s.ask(id('malformed-json'), { method: 'POST', path: tool.path, headers: jsonHeaders(), body: '{"a":' });
    await s.ask(id('wrong-content-type'), {
      method: 'POST',
      path: tool.path,
      headers: [['content-type', 'text/plain']],
      body: 'hello',
    });
  }
}

/** The paid tool answers: unpaid, malformed payments, a real payment, its replay, an MPP credential and its replay. */
async function recordPaid(s: Session, tool: CatalogTool): Promise<void> {
  const id = (what: string) => `http/${tool.name}/${what}`;
  const input = validInput(tool);
  const unpaid = await s.ask(id('unpaid'), callRequest(tool, input));
  await s.ask(id('payment-not-base64'), callRequest(tool, input, [['payment-signature', '!!not base64!!']]));
  await s.ask(id('payment-not-json'), callRequest(tool, input, [['payment-signature', 'bm90IGpzb24=']]));
  await s.ask(id('payment-v1-header'), callRequest(tool, input, [['x-payment', 'e30=']]));
  await s.ask(
    id('both-protocols'),
    callRequest(tool, input, [
      ['payment-signature', 'e30='],
      ['authorization', 'Payment e30'],
    ]),
  );
  await s.ask(id('mpp-malformed'), callRequest(tool, input, [['authorization', 'Payment not-a-credential']]));
  const payable = payableEntry(challengeOf(unpaid));
  if (payable) {
    const { header } = await signFor(s.payers.http, payable);
    if (tool.method === 'GET') await s.ask(id('head-with-payment'), callRequest(tool, input, [header], 'HEAD'));
    await s.ask(id('paid'), callRequest(tool, input, [header]));
    await s.ask(id('replayed'), callRequest(tool, input, [header]));
    const underpaid = await signFor(s.payers.http, payable, { amount: '1' });
    await s.ask(id('underpaid'), callRequest(tool, input, [underpaid.header]));
  }
  if (headerOf(unpaid, 'www-authenticate')?.includes('Payment')) await recordMpp(s, tool, input);
}

/**
 * An MPP credential the official mppx client signs for the tool's HTTP call with `input`; undefined when the server
 * offers no challenge of the local chain in this configuration (nothing an MPP client could pay).
 */
export async function mppCredential(
  s: Session,
  payer: Parameters<typeof signCredential>[0],
  tool: CatalogTool,
  input: Record<string, unknown>,
): Promise<string | undefined> {
  const probe = callRequest(tool, input);
  const init: RequestInit = {
    method: probe.method,
    headers: Object.fromEntries(probe.headers),
    ...(probe.body === undefined ? {} : { body: probe.body }),
  };
  try {
    return await signCredential(payer, new URL(probe.path, s.baseUrl).href, init);
  } catch {
    return undefined;
  }
}

/** An MPP credential signed by the official mppx client for the tool, then the same credential again. */
async function recordMpp(s: Session, tool: CatalogTool, input: Record<string, unknown>): Promise<void> {
  const id = (what: string) => `http/${tool.name}/${what}`;
  const credential = await mppCredential(s, s.payers.mpp, tool, input);
  if (credential === undefined) return;
  await s.ask(id('mpp-paid'), callRequest(tool, input, [['authorization', credential]]));
  await s.ask(id('mpp-replayed'), callRequest(tool, input, [['authorization', credential]]));
}

/** Every HTTP answer of one tool. */
export async function recordHttpTool(s: Session, tool: CatalogTool): Promise<void> {
  await recordUnpaid(s, tool);
  if (tool.paid) await recordPaid(s, tool);
  else {
    await s.ask(`http/${tool.name}/valid`, callRequest(tool, validInput(tool)));
    await s.ask(`http/${tool.name}/valid-again`, callRequest(tool, validInput(tool)));
  }
}
