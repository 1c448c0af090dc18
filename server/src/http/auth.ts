import { createHash, timingSafeEqual } from 'node:crypto';
import { contract, routeAuth } from '@mnemo/contract';
import type { AppRoute } from '@ts-rest/core';
import type { Request, RequestHandler } from 'express';
import type { Database } from '../db/client.js';
import { getWorkspaceById } from '../db/queries/workspaces.js';
import type { ApiKeyService } from '../services/api-keys.js';
import { ServiceError } from '../errors.js';
import { isUuid } from '../ids.js';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      auth?: RequestAuth;
      /** Set by ts-rest on contract routes. */
      tsRestRoute?: AppRoute;
    }
  }
}

/** Who a request acts for: a workspace, through one of its API keys or an internal subrequest (no key). */
export interface RequestAuth {
  workspaceId: string;
  apiKeyId: string | null;
  /** Epoch ms until which the key has the introductory rate limit (operator-minted keys). */
  introductoryUntil?: number;
}

/**
 * Internal subrequests (spec auth mode I): `x-internal-mcp: 1` with `x-internal-secret` equal to
 * the configured secret, for the workspace named by `x-workspace-id`. Spec rule 2 binds them to
 * POST /v1/memories: on every other route the headers grant nothing.
 */
export interface InternalAuthOptions {
  /** MNEMO_INTERNAL_SECRET; undefined turns internal subrequests off (the headers are ignored). */
  secret: string | undefined;
  /** Where `x-workspace-id` is checked to exist. */
  db: Database;
}

const INTERNAL_ROUTE = contract.memories.createMemory;

const acceptsInternal = (route: AppRoute | undefined) =>
  route?.method === INTERNAL_ROUTE.method && route.path === INTERNAL_ROUTE.path;

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
  if (!isUuid(workspaceId) || !(await getWorkspaceById(db, workspaceId))) {
    throw new ServiceError(
      'UNAUTHORIZED',
      'An internal request must name an existing workspace in x-workspace-id',
    );
  }
  return { workspaceId, apiKeyId: null };
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
 * Enforces each contract route's `metadata.auth`: public routes pass, tenant routes need a key.
 * With `internal`, POST /v1/memories also accepts an internal subrequest: when it carries
 * `x-internal-mcp: 1`, the internal credentials alone decide (a wrong secret is 401).
 */
export function apiKeyAuth({
  apiKeys,
  internal,
}: {
  apiKeys: ApiKeyService;
  internal?: InternalAuthOptions;
}): RequestHandler {
  return async function apiKeyAuthMiddleware(req, _res, next) {
    if (req.tsRestRoute && routeAuth(req.tsRestRoute) === 'public') return next();
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
