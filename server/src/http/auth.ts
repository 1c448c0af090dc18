import { createHash, timingSafeEqual } from 'node:crypto';
import { CSRF_HEADER, DASHBOARD_SESSION_COOKIE, routeAuth, routeMetadata } from '@mnemo/contract';
import type { AppRoute } from '@ts-rest/core';
import type { Request, RequestHandler } from 'express';
import type { Database } from '../db/client.js';
import { workspaceExists } from '../services/api-keys/admin.js';
import type { ApiKeyService } from '../services/api-keys/index.js';
import { DashboardSessions, type SessionContext } from '../services/dashboard/sessions.js';
import { ServiceError } from '../errors.js';
import { isUuid } from '../ids.js';
import { readCookie } from './cookies.js';

/** Who a request acts for: a workspace, through one of its API keys or an internal subrequest (no key). */
export interface RequestAuth {
  workspaceId: string;
  apiKeyId: string | null;
  /** Epoch ms until which the key has the introductory rate limit (operator-minted keys). */
  introductoryUntil?: number;
  /** The key's scope (`admin` keys may create workspaces); absent without a key. */
  scope?: 'tenant' | 'admin';
  /** Set when a dashboard session (the spec's S) authenticated the request instead of a key. */
  session?: SessionContext;
  /** Set when an internal subrequest (the spec's I) authenticated the request. */
  internal?: true;
}

/**
 * Internal subrequests (spec auth mode I): `x-internal-mcp: 1` with `x-internal-secret` equal to
 * the configured secret, for the workspace named by `x-workspace-id`. Spec rule 2 binds them to
 * POST /v1/memories: only a route whose metadata says `internalSubrequest` accepts them; on every
 * other route the headers grant nothing.
 */
export interface InternalAuthOptions {
  /** MNEMO_INTERNAL_SECRET; undefined turns internal subrequests off (the headers are ignored). */
  secret: string | undefined;
  /** Where `x-workspace-id` is checked to exist. */
  db: Database;
}

const acceptsInternal = (route: AppRoute | undefined) =>
  route !== undefined && routeMetadata(route).internalSubrequest === true;

/** Constant time, whatever the lengths: both sides are hashed to 32 bytes first. */
function sameSecret(presented: string, expected: string): boolean {
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(presented), digest(expected));
}

async function authenticateInternal(
  req: Request,
  { secret, db }: { secret: string; db: Database },
): Promise<RequestAuth> {
  if (!sameSecret(req.get('x-internal-secret') ?? '', secret)) {
    throw new ServiceError('UNAUTHORIZED', 'Invalid internal request credentials');
  }
  const workspaceId = req.get('x-workspace-id')?.trim() ?? '';
  if (!isUuid(workspaceId) || !(await workspaceExists(db, workspaceId))) {
    throw new ServiceError(
      'UNAUTHORIZED',
      'An internal request must name an existing workspace in x-workspace-id',
    );
  }
  return { workspaceId, apiKeyId: null, internal: true };
}

function presentedKey(
  authorization: string | undefined,
  apiKeyHeader: string | undefined,
): string | undefined {
  if (authorization) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (match) return match[1];
  }
  return apiKeyHeader?.trim() || undefined;
}

/**
 * Enforces each contract route's `metadata.auth`: public routes and the payment callback pass,
 * tenant routes need a key.
 * With `internal`, a route whose metadata allows it (POST /v1/memories) also accepts an internal subrequest: when it carries
 * `x-internal-mcp: 1`, the internal credentials alone decide (a wrong secret is 401). With
 * `sessions`, a request without a key may use the dashboard session cookie instead; a presented
 * key always wins over a cookie.
 */
export function apiKeyAuth({
  apiKeys,
  internal,
  sessions,
}: {
  apiKeys: ApiKeyService;
  internal?: InternalAuthOptions;
  /** Accept a dashboard session cookie when no key is presented (CSRF on unsafe methods). */
  sessions?: DashboardSessions;
}): RequestHandler {
  return async function apiKeyAuthMiddleware(req, _res, next) {
    // Public routes need nothing; the payment callback (H) is signed by the provider and
    // verified by its own route middleware (http/payment-callback.ts), never by an API key.
    const mode = req.tsRestRoute ? routeAuth(req.tsRestRoute) : undefined;
    if (mode === 'public' || mode === 'payment_callback') return next();
    try {
      if (
        internal?.secret &&
        req.get('x-internal-mcp') === '1' &&
        acceptsInternal(req.tsRestRoute)
      ) {
        req.auth = await authenticateInternal(req, { secret: internal.secret, db: internal.db });
        return next();
      }
      const key = presentedKey(req.get('authorization'), req.get('x-api-key'));
      // No key but a session cookie: a browser on the console (the spec's S).
      if (!key && sessions && readCookie(req, DASHBOARD_SESSION_COOKIE) !== undefined) {
        const session = await authenticateSession(req, sessions);
        req.auth = { workspaceId: session.workspaceId, apiKeyId: null, session };
        return next();
      }
      if (!key) {
        throw new ServiceError(
          'UNAUTHORIZED',
          'Missing API key: send Authorization: Bearer <key> or x-api-key: <key>',
        );
      }
      const auth = await apiKeys.authenticate(key);
      if (!auth) throw new ServiceError('UNAUTHORIZED', 'Invalid or revoked API key');
      req.auth = auth;
      next();
    } catch (error) {
      next(error);
    }
  };
}

/** The caller's tenant, for handlers behind {@link apiKeyAuth}. */
export function requireAuth(req: { auth?: RequestAuth }): RequestAuth {
  if (!req.auth) throw new ServiceError('UNAUTHORIZED', 'Authentication required');
  return req.auth;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * The session of the request's cookie: 401 when missing, unknown or expired; on unsafe methods
 * `x-csrf-token` must equal the session's CSRF token, else 403 (spec rule 3).
 */
async function authenticateSession(
  req: Request,
  sessions: DashboardSessions,
): Promise<SessionContext> {
  const token = readCookie(req, DASHBOARD_SESSION_COOKIE);
  const session = token ? await sessions.authenticate(token) : undefined;
  if (!session) throw new ServiceError('UNAUTHORIZED', 'Missing, unknown or expired session');
  if (
    !SAFE_METHODS.has(req.method) &&
    !DashboardSessions.csrfMatches(session, req.get(CSRF_HEADER))
  ) {
    throw new ServiceError('FORBIDDEN', `Missing or invalid ${CSRF_HEADER} header`);
  }
  return session;
}

/**
 * Guards the dashboard area by each route's `metadata.auth`: `dashboard_token` routes verify the
 * JWT in their body themselves; `dashboard_session` routes need the session cookie (and CSRF on
 * mutations). Runs before the body is validated, so an anonymous caller learns nothing.
 */
export function dashboardSessionAuth({
  sessions,
}: {
  sessions: DashboardSessions;
}): RequestHandler {
  return async function dashboardSessionAuthMiddleware(req, _res, next) {
    const mode = req.tsRestRoute ? routeAuth(req.tsRestRoute) : 'dashboard_session';
    if (mode === 'dashboard_token' || mode === 'public') return next();
    try {
      const session = await authenticateSession(req, sessions);
      req.auth = { workspaceId: session.workspaceId, apiKeyId: null, session };
      next();
    } catch (error) {
      next(error);
    }
  };
}

/** The session of a request behind {@link dashboardSessionAuth}. */
export function requireSession(req: { auth?: RequestAuth }): SessionContext {
  const session = req.auth?.session;
  if (!session) throw new ServiceError('UNAUTHORIZED', 'A dashboard session is required');
  return session;
}
