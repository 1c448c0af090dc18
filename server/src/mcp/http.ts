import type { IncomingMessage } from 'node:http';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import express, {
  type NextFunction,
  type Request,
  type RequestHandler,
  type Response,
  type Router,
} from 'express';
import { apiKeyAuth, requireAuth } from '../http/auth.js';
import { ServiceError } from '../errors.js';
import { sendError } from '../http/errors.js';
import { clientRateLimit } from '../http/limits.js';
import { clientAddressKey } from '../http/rate-limit.js';
import type { RouteTable } from '../http/route-table.js';
import type { LimitBackend } from '../limits/backend.js';
import type { Logger } from '../logger.js';
import type { Operations } from '../operations/index.js';
import type { ApiKeyService } from '../services/api-keys/index.js';
import { withHttpRequest } from './context.js';
import { landingPage } from './landing.js';
import { MCP_PATHS } from './paths.js';
import { createMcpServer } from './server.js';
import type { McpSessionStore, SessionBinding } from './sessions.js';

/** What the MCP door needs: the operations its tools call and the door's own machinery. */
export interface McpDoorDeps {
  operations: Operations;
  apiKeys: ApiKeyService;
  sessions: McpSessionStore;
  /** Counts the per-client-address limit of MCP paths. */
  limits: LimitBackend;
  logger: Logger;
  settings: {
    version: string;
    /** Requests per minute per client address on MCP paths. */
    rateLimitPerMinute: number;
    maxBodyBytes: number;
  };
}

const SESSION_HEADER = 'mcp-session-id';

/** MCP answers at the protocol level in JSON-RPC: parse errors, missing or unknown sessions. */
function sendJsonRpcError(res: Response, status: number, code: number, message: string): void {
  res.status(status).json({ jsonrpc: '2.0', error: { code, message }, id: null });
}

const sessionNotFound = (res: Response) => sendJsonRpcError(res, 404, -32001, 'Session not found');
const sessionRequired = (res: Response) =>
  sendJsonRpcError(
    res,
    400,
    -32000,
    'Bad Request: Mcp-Session-Id header is required (send initialize first)',
  );

const NOT_JSON = Symbol('not JSON');

function parseBody(body: unknown): unknown {
  if (!Buffer.isBuffer(body)) return NOT_JSON;
  try {
    return JSON.parse(body.toString('utf8')) as unknown;
  } catch {
    return NOT_JSON;
  }
}

const isInitialize = (message: unknown) =>
  Array.isArray(message) ? message.some(isInitializeRequest) : isInitializeRequest(message);

/** Express 4 does not catch rejected handlers: pass failures on to the error handler. */
const handler =
  (fn: (req: Request, res: Response, next: NextFunction) => Promise<void>): RequestHandler =>
  (req, res, next) => {
    fn(req, res, next).catch(next);
  };

const bindingOf = (req: Request): SessionBinding => {
  const { workspaceId, apiKeyId } = requireAuth(req);
  return { workspaceId, apiKeyId };
};

/**
 * Streamable HTTP at each MCP path, after the app's Origin, OPTIONS, body-size and 405 checks:
 * the IP rate limit, then per method
 *   POST   API key → own JSON parsing (-32700 on malformed JSON) → the caller's session, or a new
 *          one for `initialize` → the SDK transport;
 *   GET    `Upgrade: websocket` → 426; no `text/event-stream` in Accept → the HTML landing page
 *          (public); otherwise API key → the session's event stream;
 *   DELETE API key → closes the session (200).
 * A session belongs to the workspace and key that initialized it; anyone else is told 404.
 */
export function mcpRoutes(
  deps: McpDoorDeps,
  table: RouteTable,
  /** The tenant request limits (per key, per workspace, in flight), run after the key check. */
  limits: RequestHandler[] = [],
): Router {
  const { settings, sessions, logger } = deps;
  for (const path of MCP_PATHS)
    for (const method of ['POST', 'GET', 'DELETE']) table.add(method, path);

  // Case-sensitive like the route table: `/MCP` is not an MCP path (nor known at all).
  const router = express.Router({ caseSensitive: true });
  router.all(
    MCP_PATHS,
    clientRateLimit({
      backend: deps.limits,
      name: 'mcp-ip',
      limit: settings.rateLimitPerMinute,
      key: clientAddressKey,
      describe: `${settings.rateLimitPerMinute} requests per minute per client address on MCP paths`,
      logger,
    }),
  );
  // Keys only: the internal subrequest headers grant nothing here (spec: auth rule 2).
  const auth = apiKeyAuth({ apiKeys: deps.apiKeys });
  // The app's JSON parser skips MCP paths so that malformed JSON is a JSON-RPC parse error here.
  const rawBody = express.raw({ type: () => true, limit: settings.maxBodyBytes });

  /**
   * Serves one HTTP request of a session with a fresh SDK server over a stateless transport:
   * the session is the store's record (checked by the caller), so any instance can serve it.
   */
  async function serve(req: Request, res: Response, next: NextFunction, body?: unknown) {
    const server = createMcpServer({
      operations: deps.operations,
      logger,
      version: settings.version,
    });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    const stream = {
      close: async () => {
        await transport.close();
        await server.close();
      },
    };
    const untrack = sessions.track(stream);
    res.on('close', () => {
      untrack();
      void stream.close().catch(() => undefined);
    });
    try {
      await server.connect(transport);
      // Express's `req.auth` is ours, not the SDK's AuthInfo: tools read the request from context.
      const incoming: IncomingMessage = req;
      await withHttpRequest(req, () => transport.handleRequest(incoming, res, body));
    } catch (error) {
      next(error);
    }
  }

  const post = handler(async (req, res, next) => {
    const message = parseBody(req.body);
    if (message === NOT_JSON)
      return sendJsonRpcError(res, 400, -32700, 'Parse error: the body is not valid JSON');
    const binding = bindingOf(req);
    const sessionId = req.get(SESSION_HEADER);
    if (sessionId) {
      if (!(await sessions.find(sessionId, binding))) return sessionNotFound(res);
      // A stateless transport names no session: its answers carry the id as a session's do.
      res.setHeader(SESSION_HEADER, sessionId);
      return serve(req, res, next, message);
    }
    if (!isInitialize(message)) return sessionRequired(res);
    const id = await sessions.open(binding);
    // Set before the transport writes its headers, which Node merges with this one.
    res.setHeader(SESSION_HEADER, id);
    await serve(req, res, next, message);
    // An initialize the transport refused (bad params, a batch) opened nothing.
    if (res.statusCode >= 400) await sessions.close(id, binding);
  });

  const streamOrPage: RequestHandler = (req, res, next) => {
    if (req.get('upgrade')?.toLowerCase().includes('websocket')) {
      return sendError(
        req,
        res,
        new ServiceError(
          'UPGRADE_REQUIRED',
          'WebSocket is not supported: this MCP server speaks streamable HTTP. POST JSON-RPC to this URL with Accept: application/json, text/event-stream.',
        ),
      );
    }
    if (!(req.get('accept') ?? '').includes('text/event-stream')) {
      res.status(200).type('html').setHeader('Cache-Control', 'no-store');
      return res.send(landingPage(req));
    }
    next();
  };

  /** GET: the session's event stream (nothing is pushed on it: tool calls answer on their POST). */
  const stream = handler(async (req, res, next) => {
    const sessionId = req.get(SESSION_HEADER);
    if (!sessionId) return sessionRequired(res);
    if (!(await sessions.find(sessionId, bindingOf(req)))) return sessionNotFound(res);
    res.setHeader(SESSION_HEADER, sessionId);
    return serve(req, res, next);
  });

  /** DELETE: ends the session for every instance. */
  const end = handler(async (req, res) => {
    const sessionId = req.get(SESSION_HEADER);
    if (!sessionId) return sessionRequired(res);
    if (!(await sessions.close(sessionId, bindingOf(req)))) return sessionNotFound(res);
    res.status(200).end();
  });

  router.post(MCP_PATHS, auth, ...limits, rawBody, post);
  router.get(MCP_PATHS, streamOrPage, auth, stream);
  // Not GET: its event stream would hold an in-flight lease for as long as it stays open.
  router.delete(MCP_PATHS, auth, ...limits, end);
  return router;
}
