import { routeAuth } from '@mnemo/contract';
import type { AppRoute } from '@ts-rest/core';
import type { RequestHandler } from 'express';
import type { ApiKeyService, AuthContext } from '../services/api-keys.js';
import { ApiError } from './errors.js';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      auth?: AuthContext;
      /** Set by ts-rest on contract routes. */
      tsRestRoute?: AppRoute;
    }
  }
}

function presentedKey(authorization: string | undefined, apiKeyHeader: string | undefined): string | undefined {
  if (authorization) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (match) return match[1];
  }
  return apiKeyHeader?.trim() || undefined;
}

/** Enforces each contract route's `metadata.auth`: public routes pass, tenant routes need a key. */
export function apiKeyAuth({ apiKeys }: { apiKeys: ApiKeyService }): RequestHandler {
  return async function apiKeyAuthMiddleware(req, _res, next) {
    if (req.tsRestRoute && routeAuth(req.tsRestRoute) === 'public') return next();
    try {
      const key = presentedKey(req.get('authorization'), req.get('x-api-key'));
      if (!key) {
        throw new ApiError(
          'UNAUTHORIZED',
          'Missing API key: send Authorization: Bearer <key> or x-api-key: <key>',
        );
      }
      const auth = await apiKeys.authenticate(key);
      if (!auth) throw new ApiError('UNAUTHORIZED', 'Invalid or revoked API key');
      req.auth = auth;
      next();
    } catch (error) {
      next(error);
    }
  };
}

/** The caller's tenant, for handlers behind {@link apiKeyAuth}. */
export function requireAuth(req: { auth?: AuthContext }): AuthContext {
  if (!req.auth) throw new ApiError('UNAUTHORIZED', 'Authentication required');
  return req.auth;
}
