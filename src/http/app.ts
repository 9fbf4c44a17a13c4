import type { ErrorRequestHandler, Express, Request, RequestHandler } from 'express';
import { ToolError } from '../shared/errors.js';
import type { InvokeDeps } from '../pipeline/invoke.js';
import type { CarriedPayment } from '../payments/answer/types.js';
import { answerCall, answerRefundOnly, type AnswerRequest } from '../pipeline/answer.js';
import { MPP_HEADERS, isPaymentAuthorization } from '../shared/http-wire.js';
import { isPaid, type AnyPaidToolDefinition, type AnyToolDefinition } from '../tool/tool.js';
import { bodyErrors, jsonBody, readBody } from './body.js';
import { sendError, writeAnswer } from './encode.js';

const DEFAULT_BODY_LIMIT = 64 * 1024;

/**
 * CORS for browsers: every answer may be read from any origin and exposes the payment headers; what a request may
 * send (headers, methods) is said on the preflight (OPTIONS) only, the one answer a browser reads it from (Fetch
 * standard, CORS-preflight fetch), which keeps it out of every 402's header bytes.
 */
const cors: RequestHandler = (req, res, next) => {
  res.setHeader('Access-Control-Allow-Origin', '*');
  res.setHeader(
    'Access-Control-Expose-Headers',
    `PAYMENT-REQUIRED, PAYMENT-RESPONSE, X-PAYMENT-RESPONSE, Retry-After, ${MPP_HEADERS.challenge}, ${MPP_HEADERS.receipt}`,
  );
  if (req.method === 'OPTIONS') {
    res.setHeader(
      'Access-Control-Allow-Headers',
      `Content-Type, PAYMENT-SIGNATURE, X-PAYMENT, ${MPP_HEADERS.credential}`,
    );
    res.setHeader('Access-Control-Allow-Methods', 'GET, HEAD, POST, OPTIONS');
    res.status(204).end();
    return;
  }
  next();
};

function readPayment(req: Request): CarriedPayment | undefined {
  const v2 = req.header('payment-signature');
  if (v2 !== undefined) return { protocol: 'x402', source: 'payment-signature', value: v2 };
  const v1 = req.header('x-payment');
  if (v1 !== undefined) return { protocol: 'x402', source: 'x-payment', value: v1 };
  return undefined;
}

/** The payment a request carries: an MPP credential (`Authorization: Payment`), else an x402 header; both is refused. */
function carriedPayment(req: Request): CarriedPayment | undefined {
  const x402 = readPayment(req);
  const authorization = req.header('authorization');
  // Any other Authorization scheme is not a payment and is ignored.
  if (!isPaymentAuthorization(authorization)) return x402;
  return x402 ? { protocol: 'both' } : { protocol: 'mpp', from: 'header', value: authorization };
}

function readInput(
  tool: AnyToolDefinition,
  req: Request,
): { type: 'input'; value: unknown } | { type: 'refused'; error: ToolError } {
  if (tool.method === 'GET') return { type: 'input', value: Object.keys(req.query).length > 0 ? req.query : undefined };
  const body = readBody(tool, req);
  switch (body.type) {
    case 'absent':
      return { type: 'input', value: undefined };
    case 'present':
      return { type: 'input', value: body.fields };
    case 'refused':
      return body;
  }
}

/** A tool's route: paid (payment headers read, x402/MPP answers) when it has a price, else free. */
function route(deps: InvokeDeps, tool: AnyToolDefinition): RequestHandler {
  return isPaid(tool) ? paidRoute(deps, tool) : freeRoute(deps, tool);
}

function paidRoute(deps: InvokeDeps, tool: AnyPaidToolDefinition): RequestHandler {
  return (req, res, next) => {
    const controller = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) controller.abort();
    });
    const input = readInput(tool, req);
    if (input.type === 'refused') return sendError(res, input.error);
    const call: AnswerRequest = { tool, input: input.value, transport: 'http', signal: controller.signal };
    answerCall(deps, { ...call, proof: carriedPayment(req) })
      .then((answer) => writeAnswer(res, answer))
      .catch(next);
  };
}

/**
 * HEAD on a paid GET route is a probe: answered like the same GET without a payment (402 with the requirements, or
 * 400 for an invalid query), body dropped. Express would otherwise run the GET route, i.e. a paid call whose output
 * is thrown away; so a HEAD that carries a payment is refused with 405 before the payment is even read.
 */
function probe(deps: InvokeDeps, tool: AnyPaidToolDefinition): RequestHandler {
  return (req, res, next) => {
    if (readPayment(req) !== undefined || isPaymentAuthorization(req.header('authorization'))) {
      res.setHeader('Allow', 'GET, HEAD, OPTIONS');
      const message = `HEAD only probes ${tool.path} and never runs a call; send the payment with GET. Your payment was not used.`;
      sendError(res, new ToolError('method_not_allowed', message));
      return;
    }
    const controller = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) controller.abort();
    });
    const input = readInput(tool, req);
    if (input.type === 'refused') return sendError(res, input.error);
    answerCall(deps, { tool, input: input.value, transport: 'http', signal: controller.signal })
      .then((answer) => writeAnswer(res, answer))
      .catch(next);
  };
}

/**
 * GET on a paid POST route: the official `batch-settlement` client probes and asks for a cooperative refund with GET,
 * so a bare GET gets the challenge's batch-settlement entries and a GET carrying a refund request is answered as on a
 * GET route (the refund settled, no handler run); any other GET, and HEAD, falls through to the 405 (docs/payments.md).
 */
function refundRoute(deps: InvokeDeps, tool: AnyPaidToolDefinition): RequestHandler {
  return (req, res, next) => {
    if (req.method !== 'GET') return next();
    const controller = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) controller.abort();
    });
    const call: AnswerRequest = { tool, input: undefined, transport: 'http', signal: controller.signal };
    answerRefundOnly(deps, { ...call, proof: carriedPayment(req) })
      .then((answer) => (answer ? writeAnswer(res, answer) : next()))
      .catch(next);
  };
}

/** A free tool: query (GET) or body (POST) plus path parameters in, output or error body out; no payment is read. */
function freeRoute(deps: InvokeDeps, tool: AnyToolDefinition): RequestHandler {
  return (req, res, next) => {
    const controller = new AbortController();
    res.on('close', () => {
      if (!res.writableFinished) controller.abort();
    });
    let fields: Record<string, unknown> = req.query;
    if (tool.method === 'POST') {
      const body = readBody(tool, req);
      if (body.type === 'refused') return sendError(res, body.error);
      fields = body.type === 'present' ? body.fields : {};
    }
    answerCall(deps, { tool, input: { ...fields, ...req.params }, transport: 'http', signal: controller.signal })
      .then((answer) => writeAnswer(res, answer))
      .catch(next);
  };
}

/** The paths whose refusals say what was charged: every paid tool's, and /mcp while it serves a paid tool. */
export function paidRoutes(tools: readonly AnyToolDefinition[]): string[] {
  const paid = tools.filter((tool) => isPaid(tool)).map((tool) => tool.path);
  return paid.length > 0 ? [...paid, '/mcp'] : [];
}

function methodNotAllowed(method: string, path: string, methods: readonly string[]): ToolError {
  const use = methods.includes('GET') ? 'GET (HEAD to probe without a body)' : methods.join(' or ');
  const deletes = method === 'DELETE' ? ' this endpoint deletes nothing;' : '';
  return new ToolError('method_not_allowed', `${method} is not allowed on ${path}:${deletes} use ${use}.`);
}

/**
 * Adds every tool of the registry at its exact method and path (a paid GET also answers HEAD as a probe; a paid POST
 * answers a channel refund's GET; a free tool takes path parameters), plus 404/405 answers and error handling.
 */
export function mountTools(app: Express, deps: InvokeDeps, tools: readonly AnyToolDefinition[]): void {
  const methodsByPath = new Map<string, string[]>();
  for (const tool of tools) {
    const handler = route(deps, tool);
    if (tool.method === 'GET') {
      if (isPaid(tool)) app.head(tool.path, cors, probe(deps, tool));
      app.get(tool.path, cors, handler);
    } else {
      const limit = tool.maxBodyBytes ?? DEFAULT_BODY_LIMIT;
      app.post(tool.path, cors, jsonBody(limit), bodyErrors, handler);
      const getToo = tools.some((other) => other.path === tool.path && other.method === 'GET');
      if (isPaid(tool) && !getToo) app.get(tool.path, cors, refundRoute(deps, tool));
    }
    app.options(tool.path, cors);
    methodsByPath.set(tool.path, [...(methodsByPath.get(tool.path) ?? []), tool.method]);
  }
  for (const [path, methods] of methodsByPath) {
    app.all(path, (req, res) => {
      res.setHeader('Allow', [...methods, ...(methods.includes('GET') ? ['HEAD'] : []), 'OPTIONS'].join(', '));
      sendError(res, methodNotAllowed(req.method, path, methods));
    });
  }
}

/** Final handlers: unknown routes get a 404 body, unexpected errors a 500 body, never a stack trace. */
export function mountFallbacks(app: Express, onError: (err: unknown) => void): void {
  app.use((req, res) => {
    sendError(
      res,
      new ToolError(
        'not_found',
        `No endpoint at ${req.method} ${req.path}. See the README or /mcp for the list of tools.`,
      ),
    );
  });
  const last: ErrorRequestHandler = (err, _req, res, _next) => {
    onError(err);
    if (res.headersSent) return;
    sendError(res, new ToolError('internal', 'The server failed unexpectedly; try again later.'));
  };
  app.use(last);
}
