import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { Request, RequestHandler } from 'express';
import ipaddr from 'ipaddr.js';
import { RateLimiterRes } from 'rate-limiter-flexible';
import { ServiceError } from '../errors.js';
import type { LimitBackend } from '../limits/backend.js';
import type { Logger } from '../logger.js';

/** Constant time, whatever the lengths: both sides are hashed to 32 bytes first. */
function sameSecret(given: string, expected: string): boolean {
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

/** The signed form of `x-admin-token`: `v1,t=<unix seconds>,n=<nonce>,s=<hex HMAC-SHA256>`. */
const SIGNED_FORM = /^v1,t=(\d{1,12}),n=([A-Za-z0-9_-]{16,128}),s=([0-9a-f]{64})$/;

/**
 * The string a signed admin token signs: version, time, nonce, method, path with query, and the
 * SHA-256 of the raw body (of the empty string without one), one per line. Exported so tests and
 * the docs' shell example agree with the server.
 */
export function adminSigningString(input: {
  timestamp: number | string;
  nonce: string;
  method: string;
  /** Path and query exactly as sent (`/v1/api-keys?workspace_id=…`). */
  path: string;
  body: Buffer | string | undefined;
}): string {
  const bodyHash = createHash('sha256')
    .update(input.body ?? '')
    .digest('hex');
  return [
    'v1',
    String(input.timestamp),
    input.nonce,
    input.method.toUpperCase(),
    input.path,
    bodyHash,
  ].join('\n');
}

/** The header value of a signed admin token (a client's side of {@link adminSigningString}). */
export function signAdminRequest(
  token: string,
  input: Parameters<typeof adminSigningString>[0],
): string {
  const signature = createHmac('sha256', token).update(adminSigningString(input)).digest('hex');
  return `v1,t=${input.timestamp},n=${input.nonce},s=${signature}`;
}

type Cidr = [ipaddr.IPv4 | ipaddr.IPv6, number];

/** Parses `MNEMO_ADMIN_IP_ALLOWLIST` entries; a bare address is a /32 (or /128). Throws on junk. */
export function parseAllowlist(entries: readonly string[]): Cidr[] {
  return entries.map((entry) => {
    try {
      if (entry.includes('/')) return ipaddr.parseCIDR(entry);
      const address = ipaddr.parse(entry);
      return [address, address.kind() === 'ipv4' ? 32 : 128];
    } catch {
      throw new Error(`MNEMO_ADMIN_IP_ALLOWLIST: not an address or CIDR: ${entry}`);
    }
  });
}

/** Whether `ip` is inside one of the ranges; IPv4-mapped IPv6 (`::ffff:10.0.0.1`) counts as IPv4. */
export function allowlisted(ip: string | undefined, ranges: readonly Cidr[]): boolean {
  if (!ip || !ipaddr.isValid(ip)) return false;
  const address = ipaddr.process(ip);
  return ranges.some(
    ([range, bits]) => range.kind() === address.kind() && address.match([range, bits] as never),
  );
}

export interface AdminAuthOptions {
  /** MNEMO_ADMIN_TOKEN; unset: admin routes refuse everyone. */
  token: string | undefined;
  /** CIDRs the caller's address (`req.ip`, after `trust proxy`) must be in; empty: any. */
  ipAllowlist?: readonly string[];
  /** Epoch ms until which a valid credential from outside the allowlist passes (logged at warn). */
  breakGlassUntil?: number | undefined;
  /** Largest accepted |now - t| of a signed token. */
  maxSkewSeconds?: number;
  /** Remembers nonces for the skew window (Redis when `REDIS_URL` is set, so every instance does). */
  limits: LimitBackend;
  logger: Logger;
  now?: () => number;
}

/**
 * Admin auth (A): `x-admin-token` is either the configured token itself or a signed form
 * (`v1,t=…,n=…,s=…`, an HMAC-SHA256 keyed by the token over {@link adminSigningString}), so the
 * token need not travel. A signed token is accepted once (its nonce is remembered for twice the
 * skew window) and only within `maxSkewSeconds` of the server's clock. With an IP allowlist, a
 * caller outside it is refused (403) before its credential is looked at, unless break-glass is on
 * and the credential is valid. Compares run in constant time. See docs/operator.md.
 */
export function adminAuth({
  token,
  ipAllowlist = [],
  breakGlassUntil,
  maxSkewSeconds = 300,
  limits,
  logger,
  now = Date.now,
}: AdminAuthOptions): RequestHandler {
  const ranges = parseAllowlist(ipAllowlist);
  // One point per nonce: a second use within the window is refused. Twice the skew covers a
  // token signed at the far edge of the window on either side.
  const nonces = limits.counter({
    name: 'admin-nonce',
    points: 1,
    durationSeconds: 2 * maxSkewSeconds,
  });

  async function verify(req: Request, given: string, secret: string): Promise<'plain' | 'signed'> {
    const signed = SIGNED_FORM.exec(given);
    if (!signed) {
      if (sameSecret(given, secret)) return 'plain';
      throw new ServiceError('UNAUTHORIZED', 'Missing or invalid x-admin-token');
    }
    const [, timestamp, nonce, signature] = signed as unknown as [string, string, string, string];
    const expected = createHmac('sha256', secret)
      .update(
        adminSigningString({
          timestamp,
          nonce,
          method: req.method,
          path: req.originalUrl,
          body: req.rawBody,
        }),
      )
      .digest();
    const presented = Buffer.from(signature, 'hex');
    if (presented.length !== expected.length || !timingSafeEqual(presented, expected)) {
      throw new ServiceError('UNAUTHORIZED', 'Invalid x-admin-token signature');
    }
    if (Math.abs(now() / 1000 - Number(timestamp)) > maxSkewSeconds) {
      throw new ServiceError(
        'UNAUTHORIZED',
        `Signed x-admin-token expired: t must be within ${maxSkewSeconds} s of the server clock`,
      );
    }
    try {
      await nonces.consume(nonce);
    } catch (error) {
      if (error instanceof RateLimiterRes) {
        throw new ServiceError('UNAUTHORIZED', 'Signed x-admin-token replayed: use a new nonce');
      }
      // The nonce store (Redis) is down: replay cannot be ruled out, so refuse (fail closed).
      logger.error({ err: error }, 'admin nonce store unavailable');
      throw new ServiceError('SERVICE_UNAVAILABLE', 'Admin authentication is unavailable');
    }
    return 'signed';
  }

  return async function adminAuthMiddleware(req, _res, next) {
    try {
      if (!token) {
        throw new ServiceError(
          'UNAUTHORIZED',
          'Admin routes are disabled: MNEMO_ADMIN_TOKEN is not set',
        );
      }
      const inside = ranges.length === 0 || allowlisted(req.ip, ranges);
      const breakGlass = !inside && breakGlassUntil !== undefined && now() < breakGlassUntil;
      if (!inside && !breakGlass) {
        throw new ServiceError('FORBIDDEN', 'Admin routes are not open to this address');
      }
      const form = await verify(req, req.get('x-admin-token') ?? '', token);
      if (breakGlass) {
        // Never the token: who, from where, what, and which form.
        logger.warn(
          { request_id: req.requestId, ip: req.ip, method: req.method, path: req.path, form },
          'admin break-glass: request from outside MNEMO_ADMIN_IP_ALLOWLIST accepted',
        );
      }
      next();
    } catch (error) {
      next(error);
    }
  };
}
