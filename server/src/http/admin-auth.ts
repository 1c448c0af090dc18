import { timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { ServiceError } from '../errors.js';

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  // Compare equal-length buffers so the time taken says nothing about the secret.
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Admin auth (A): `x-admin-token` equal, in constant time, to the configured token. Without a
 * configured token the admin routes refuse everyone.
 */
export function adminAuth({ token }: { token: string | undefined }): RequestHandler {
  return function adminAuthMiddleware(req, _res, next) {
    const given = req.get('x-admin-token');
    if (!token)
      return next(
        new ServiceError('UNAUTHORIZED', 'Admin routes are disabled: MNEMO_ADMIN_TOKEN is not set'),
      );
    if (!given || !sameSecret(given, token))
      return next(new ServiceError('UNAUTHORIZED', 'Missing or invalid x-admin-token'));
    next();
  };
}
