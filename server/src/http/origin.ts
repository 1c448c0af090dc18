import type { RequestHandler } from 'express';
import { ServiceError } from '../errors.js';
import { sendError } from './errors.js';
import type { RouteTable } from './route-table.js';

export interface OriginOptions {
  /** Allowed browser origins (`scheme://host[:port]`); `*` allows any. */
  allowedOrigins: string[];
  /** Paths that skip the allowlist (hosted MCP is reached from anywhere and rate-limited instead). */
  exemptPaths?: string[];
  table: RouteTable;
}

const ALLOWED_REQUEST_HEADERS =
  'authorization, content-type, x-api-key, x-request-id, x-csrf-token, x-safety-pii-scan, x-save-history, mcp-session-id, mcp-protocol-version, last-event-id';
const EXPOSED_HEADERS = 'x-request-id, retry-after, mcp-session-id';

/**
 * Origin allowlist, CORS headers and the OPTIONS preflight, in the spec's order: a denied origin
 * is refused before OPTIONS is answered, and OPTIONS never reaches auth or a handler.
 */
export function originPolicy({
  allowedOrigins,
  exemptPaths = [],
  table,
}: OriginOptions): RequestHandler {
  const allowAny = allowedOrigins.includes('*');
  const allowed = new Set(allowedOrigins);
  const exempt = new Set(exemptPaths);

  return function originPolicyMiddleware(req, res, next) {
    const origin = req.get('origin');
    // The console served at /console calls the API from the server's own origin: no CORS needed.
    const sameOrigin = origin === `${req.protocol}://${req.get('host') ?? ''}`;
    if (origin !== undefined && !sameOrigin) {
      const isExempt = exempt.has(req.path);
      if (!isExempt && !allowAny && !allowed.has(origin)) {
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
