import type { ErrorRequestHandler, Express, NextFunction, Request, RequestHandler, Response } from 'express';
import { ToolError } from '../shared/errors.js';
import type { InvokeDeps } from '../pipeline/invoke.js';
import type { CarriedPayment } from '../payments/answer/types.js';
import { answerCall, answerRefundOnly, type AnswerRequest } from '../pipeline/answer.js';
import { MPP_HEADERS, isPaymentAuthorization } from '../shared/http-wire.js';
import { isPaid, type AnyPaidToolDefinition, type AnyToolDefinition } from '../tool/tool.js';
import { bodyErrors, jsonBody, readBody } from './body.js';
import { sendError, writeAnswer } from './encode.js';

const DEFAULT_BODY_LIMIT = 64 * 1024;

/** The CORS header values, written once (every answer carries the first). */
const EXPOSED = `PAYMENT-REQUIRED, PAYMENT-RESPONSE, X-PAYMENT-RESPONSE, Retry-After, ${MPP_HEADERS.challenge}, ${MPP_HEADERS.receipt}`;
const ALLOWED = `Content-Type, PAYMENT-SIGNATURE, X-PAYMENT, ${MPP_HEADERS.credential}`;

/**
 * CORS for browsers: every answer may be read from any origin and exposes the payment headers; what a request may
 * send (headers, methods) is said on the preflight (OPTIONS) only, the one answer a browser reads it from (Fetch
 * standard, CORS-preflight fetch), which keeps it out of every 402's header bytes.
 */
const cors: RequestHandler = (req, res, next) => {
  res.setHeader('Access-Control-Allow-Origin', '*');
  res.setHeader('Access-Control-Expose-Headers', EXPOSED);
  if (req.method === 'OPTIONS') {
    res.setHeader('Access-Control-Allow-Headers', ALLOWED);
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

/** One handler of a route: a request handler, or an error handler that only errors before it reach. */
type Step = { run: RequestHandler } | { onError: ErrorRequestHandler };

/** A route's handlers as Express runs them: `next(err)` skips to the next error handler, `next()` to the next one. */
function runSteps(steps: readonly Step[], req: Request, res: Response, done: NextFunction): void {
  let at = 0;
  const next = (err?: unknown): void => {
    if (err === 'route') return done();
    if (err === 'router') return done(err);
    const step = steps[at++];
    if (!step) return done(err);
    const failed = err !== undefined && err !== null;
    if (failed !== 'onError' in step) return next(err);
    try {
      const ran: unknown = 'run' in step ? step.run(req, res, next) : step.onError(err, req, res, next);
      if (ran instanceof Promise) ran.catch((cause: unknown) => next(cause ?? new Error('Rejected promise')));
    } catch (cause) {
      next(cause);
    }
  };
  next();
}

/** Whether Express would route `path` to a path with parameters (`/v1/order/:id`): segments equal or a parameter's. */
function paramRouteMatches(pattern: string, path: string): boolean {
  const want = pattern.toLowerCase().split('/');
  const got = path.toLowerCase().split('/');
  return want.length === got.length && want.every((part, i) => part === got[i] || part.startsWith(':'));
}

/**
 * The routes of parameterless paths, found with one lookup by method and path instead of Express testing every route
 * in turn (the unpaid 402 is the hot path): matched as Express matches them (case-insensitive, one trailing slash
 * ignored, HEAD answered by GET's route when there is no HEAD route), run as a route runs its handlers.
 */
class ExactRoutes {
  private readonly routes = new Map<string, Step[]>();

  /** Adds a route; the first one of a method and path is the one that answers, as in Express. */
  add(method: string, path: string, steps: Step[]): void {
    const key = `${method} ${path.toLowerCase()}`;
    if (!this.routes.has(key)) this.routes.set(key, steps);
  }

  readonly handler: RequestHandler = (req, res, next) => {
    const raw = req.path;
    const path = (raw.length > 1 && raw.endsWith('/') ? raw.slice(0, -1) : raw).toLowerCase();
    const steps =
      this.routes.get(`${req.method} ${path}`) ?? (req.method === 'HEAD' ? this.routes.get(`GET ${path}`) : undefined);
    if (steps) runSteps(steps, req, res, next);
    else next();
  };
}

/** Whether a path has parameters or other path-to-regexp syntax (routed by Express itself). */
const routedByExpress = (path: string) => /[:*?+(){}]/.test(path);

/**
 * Adds every tool of the registry at its exact method and path (a paid GET also answers HEAD as a probe; a paid POST
 * answers a channel refund's GET; a free tool takes path parameters), plus 404/405 answers and error handling.
 */
export function mountTools(app: Express, deps: InvokeDeps, tools: readonly AnyToolDefinition[]): void {
  const methodsByPath = new Map<string, string[]>();
  const exact = new ExactRoutes();
  const params = tools.filter((tool) => routedByExpress(tool.path)).map((tool) => tool.path);
  app.use(exact.handler);
  for (const tool of tools) {
    const plain = !routedByExpress(tool.path) && !params.some((pattern) => paramRouteMatches(pattern, tool.path));
    const add = (method: 'head' | 'get' | 'post' | 'options', steps: Step[]) => {
      if (plain) exact.add(method.toUpperCase(), tool.path, steps);
      else app[method](tool.path, ...steps.map((step) => ('run' in step ? step.run : step.onError)));
    };
    const handler = route(deps, tool);
    if (tool.method === 'GET') {
      if (isPaid(tool)) add('head', [{ run: cors }, { run: probe(deps, tool) }]);
      add('get', [{ run: cors }, { run: handler }]);
    } else {
      const limit = tool.maxBodyBytes ?? DEFAULT_BODY_LIMIT;
      add('post', [{ run: cors }, { run: jsonBody(limit) }, { onError: bodyErrors }, { run: handler }]);
      const getToo = tools.some((other) => other.path === tool.path && other.method === 'GET');
      if (isPaid(tool) && !getToo) add('get', [{ run: cors }, { run: refundRoute(deps, tool) }]);
    }
    add('options', [{ run: cors }]);
    methodsByPath.set(tool.path, [...(methodsByPath.get(tool.path) ?? []), tool.method]);
  }
  for (const [path, methods] of methodsByPath) {
    // One layer for every method (`app.all` adds one per HTTP method Node knows, each compiling its path: 34 × 16).
    app.route(path).all((req, res) => {
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
