import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { Request, RequestHandler } from 'express';
import ipaddr from 'ipaddr.js';
import { RateLimiterRes } from 'rate-limiter-flexible';
import { ServiceError, SetupError } from '../errors.js';
import { warnStoreFailure, type LimitBackend } from '../limits/backend.js';
import type { Logger } from '../logger.js';
import { waitingOn } from './deadline.js';
import { sendError } from './errors.js';
import { clientAddressKey } from './rate-limit.js';

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
      throw new SetupError(`MNEMO_ADMIN_IP_ALLOWLIST: not an address or CIDR: ${entry}`);
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
  /**
   * Failed attempts allowed per client address per window; past them every admin request from
   * the address is refused (429) until the window ends, with a valid credential or not.
   */
  failures?: { limit: number; windowSeconds: number };
}

/** Enough for an operator's typos and scripts; a guesser gets 20 tries in 5 minutes. */
const DEFAULT_FAILURES = { limit: 20, windowSeconds: 300 };

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
  failures = DEFAULT_FAILURES,
}: AdminAuthOptions): RequestHandler {
  const ranges = parseAllowlist(ipAllowlist);
  // Every attempt is counted as a failure before its credential is checked, and a success gives
  // its point back afterwards without being waited for: right and wrong credentials then cost
  // the same store round trip before the answer, and concurrent guesses are counted atomically.
  const attempts = limits.counter({
    name: 'admin-failures',
    points: failures.limit,
    durationSeconds: failures.windowSeconds,
  });
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
      warnStoreFailure(logger, error, 'admin nonce store unavailable; signed requests refused');
      throw new ServiceError(
        'SERVICE_UNAVAILABLE',
        'Admin authentication is unavailable: the nonce store (Redis) did not answer',
      );
    }
    return 'signed';
  }

  /** Counts the attempt; false when the address is over its failures (answered 429 here). */
  async function admit(req: Request, res: Parameters<RequestHandler>[1], key: string) {
    try {
      await waitingOn(res, 'limit_store', attempts.consume(key));
      return true;
    } catch (outcome) {
      if (!(outcome instanceof RateLimiterRes)) {
        // The store is down: the guess limit fails open (signed tokens' nonces still fail closed).
        warnStoreFailure(logger, outcome, 'admin failure counter unavailable; attempts allowed');
        return true;
      }
      if (outcome.consumedPoints === failures.limit + 1) {
        logger.warn(
          { request_id: req.requestId, ip: req.ip, path: req.path, failures: failures.limit },
          'admin auth: too many failed attempts from this address; refused until the window ends',
        );
      }
      const retryAfter = String(Math.max(1, Math.ceil(outcome.msBeforeNext / 1000)));
      sendError(
        req,
        res,
        new ServiceError(
          'RATE_LIMITED',
          `Too many failed admin attempts from this address; retry in ${retryAfter} s`,
          undefined,
          { 'Retry-After': retryAfter },
        ),
      );
      return false;
    }
  }

  return async function adminAuthMiddleware(req, res, next) {
    const address = clientAddressKey(req);
    if (!(await admit(req, res, address))) return;
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
      attempts.reward(address).catch(() => undefined);
      next();
    } catch (error) {
      if (error instanceof ServiceError && error.code === 'UNAUTHORIZED') {
        // Never the credential: who, from where, what.
        logger.warn(
          { request_id: req.requestId, ip: req.ip, method: req.method, path: req.path },
          'admin auth failed',
        );
      } else {
        // Not a wrong credential (a refused address, the nonce store down): not a guess.
        attempts.reward(address).catch(() => undefined);
      }
      next(error);
    }
  };
}
