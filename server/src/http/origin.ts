import type { RequestHandler } from 'express';
import { ServiceError } from '../errors.js';
import { sendError } from './errors.js';
import type { RouteTable } from './route-table.js';

export interface OriginOptions {
  /** Allowed browser origins (`scheme://host[:port]`); `*` allows any. */
  allowedOrigins: string[];
  /**
   * Hosted MCP paths: outside the REST denial (the spec's step 3) but under the MCP transport
   * spec's Origin rule (DNS rebinding), see `mcpOriginAllowed`. Refused in JSON-RPC.
   */
  mcp?: { paths: string[]; allowLocalhost: boolean };
  table: RouteTable;
}

/** Loopback names and addresses: what "the server binds to loopback" means for the MCP rule. */
export function isLoopbackHost(host: string): boolean {
  const name = host.replace(/^\[|\]$/g, '').toLowerCase();
  return name === 'localhost' || name === '::1' || /^127(\.\d{1,3}){3}$/.test(name);
}

function isLoopbackOrigin(origin: string): boolean {
  try {
    const url = new URL(origin);
    return (url.protocol === 'http:' || url.protocol === 'https:') && isLoopbackHost(url.hostname);
  } catch {
    return false;
  }
}

const ALLOWED_REQUEST_HEADERS =
  'authorization, content-type, x-api-key, x-request-id, x-csrf-token, x-safety-pii-scan, x-save-history, mcp-session-id, mcp-protocol-version, last-event-id, mnemo-consistency-token';
const EXPOSED_HEADERS = 'x-request-id, retry-after, mcp-session-id, mnemo-consistency-token';

/**
 * Origin allowlist, CORS headers and the OPTIONS preflight, in the spec's order: a denied origin
 * is refused before OPTIONS is answered, and OPTIONS never reaches auth or a handler.
 */
export function originPolicy({ allowedOrigins, mcp, table }: OriginOptions): RequestHandler {
  const allowAny = allowedOrigins.includes('*');
  const allowed = new Set(allowedOrigins);
  const mcpPaths = new Set(mcp?.paths ?? []);

  return function originPolicyMiddleware(req, res, next) {
    const origin = req.get('origin');
    if (origin !== undefined && mcpPaths.has(req.path)) {
      // No same-origin pass here: the Host header is exactly what a DNS rebinding attack controls.
      const ok =
        allowAny || allowed.has(origin) || (mcp!.allowLocalhost && isLoopbackOrigin(origin));
      if (!ok) {
        // As the MCP SDK's own DNS rebinding check answers: 403 with a JSON-RPC error.
        return res.status(403).json({
          jsonrpc: '2.0',
          error: { code: -32000, message: 'Forbidden: this Origin may not use the MCP server' },
          id: null,
        });
      }
    }
    // The console served at /console calls the API from the server's own origin: no CORS needed.
    const sameOrigin = origin === `${req.protocol}://${req.get('host') ?? ''}`;
    if (origin !== undefined && !sameOrigin) {
      if (!mcpPaths.has(req.path) && !allowAny && !allowed.has(origin)) {
        return sendError(
          req,
          res,
          new ServiceError('FORBIDDEN', `Origin ${origin} is not allowed`),
        );
      }
      res.setHeader('Access-Control-Allow-Origin', origin);
      res.setHeader('Access-Control-Allow-Credentials', 'true');
      res.setHeader('Access-Control-Expose-Headers', EXPOSED_HEADERS);
      res.append('Vary', 'Origin');
    }
    if (req.method !== 'OPTIONS') return next();

    const methods = table.allowedMethods(req.path);
    if (!methods) {
      return sendError(req, res, new ServiceError('NOT_FOUND', `No route for ${req.path}`));
    }
    res.setHeader('Allow', methods.join(', '));
    res.setHeader('Access-Control-Allow-Methods', methods.join(', '));
    res.setHeader('Access-Control-Allow-Headers', ALLOWED_REQUEST_HEADERS);
    res.setHeader('Access-Control-Max-Age', '600');
    res.status(204).end();
  };
}
